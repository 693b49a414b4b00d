import { EventEmitter } from "node:events";

/** Units a length can be expressed in. */
export enum Unit {
  Pixel = "px",
  Em = "em",
}

export interface Shape {
  area(): number;
  perimeter(): number;
}

/**
 * An axis-aligned rectangle.
 * Immutable: every operation returns a new rectangle.
 */
export class Rectangle extends EventEmitter implements Shape {
  constructor(
    readonly width: number,
    readonly height: number,
    readonly unit: Unit = Unit.Pixel,
  ) {
    super();
  }

  area(): number {
    return this.width * this.height;
  }

  perimeter(): number {
    return 2 * (this.width + this.height);
  }

  /** A copy scaled by `factor` in both directions. */
  scale(factor: number): Rectangle {
    this.emit("scaled", factor);
    return new Rectangle(this.width * factor, this.height * factor, this.unit);
  }

  toString(): string {
    return `${this.width}×${this.height}${this.unit}`;
  }
}

export type ShapeList = readonly Shape[];

export function totalArea(shapes: ShapeList): number {
  return shapes.reduce((sum, s) => sum + s.area(), 0);
}
