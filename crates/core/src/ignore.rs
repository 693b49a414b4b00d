//! Which files a repository walk skips (placeholder; the full rules land next).
