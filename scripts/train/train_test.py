"""The training script's corpus check, with the standard library only (the trainer's own packages
are imported inside its main): python3 -m unittest scripts/train/train_test.py"""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import train  # noqa: E402


def doc_pair(positive, negatives):
    return {"kind": "doc", "positive": positive, "negatives": negatives}


class CommentShortcut(unittest.TestCase):
    def test_a_corpus_where_only_negatives_keep_their_comments_is_refused(self):
        rows = [doc_pair("def f():\n    return 1", ['def g():\n    """Adds."""\n    return 2', "/** Sums. */\nint h();"])] * 10
        with self.assertRaises(SystemExit) as refused:
            train.check_no_comment_shortcut(rows)
        self.assertIn("comment would tell them apart", str(refused.exception))

    def test_a_corpus_written_alike_passes_and_reports_both_shares(self):
        rows = [doc_pair("def f():\n    return 1", ["def g():\n    return 2"])] * 9
        rows.append(doc_pair("/// Sums.\nfn f() {}", ["/// Adds.\nfn g() {}"]))
        pos, neg = train.check_no_comment_shortcut(rows)
        self.assertAlmostEqual(pos, 0.1)
        self.assertAlmostEqual(neg, 0.1)

    def test_change_pairs_are_not_counted(self):
        rows = [{"kind": "change", "positive": "x = 1", "negatives": ['"""Doc."""']}]
        self.assertEqual(train.check_no_comment_shortcut(rows), (0.0, 0.0))


if __name__ == "__main__":
    unittest.main()
