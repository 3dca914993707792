package io.datum.cdc.core.types;

/**
 * Text output of the geometric types from their binary send format (src/backend/utils/adt/
 * geo_ops.c: {@code point_send}, {@code lseg_send}, {@code path_send}, {@code box_send}, {@code
 * poly_send}, {@code line_send}, {@code circle_send} and the matching {@code *_out}, which print
 * through {@code path_encode}/{@code pair_encode} and {@code float8out_internal}, see {@link
 * PgFloatOutput}). Throws {@link IllegalArgumentException} for malformed values.
 */
final class PgGeometryText {

  private PgGeometryText() {}

  /** {@code point_send}: x, y; {@code point_out}: {@code (x,y)}. */
  static String point(PgBinaryCursor c) {
    return points(new StringBuilder(32), c, 1, ' ').toString();
  }

  /** {@code lseg_send}: two points; {@code lseg_out}: {@code [(x1,y1),(x2,y2)]}. */
  static String lseg(PgBinaryCursor c) {
    return points(new StringBuilder(64), c, 2, '[').toString();
  }

  /** {@code box_send}: high, low; {@code box_out}: {@code (high),(low)}. */
  static String box(PgBinaryCursor c) {
    return points(new StringBuilder(64), c, 2, ' ').toString();
  }

  /**
   * {@code path_send}: closed flag, int32 count, points; {@code path_out}: {@code ((..),(..))}
   * closed, {@code [(..),(..)]} open.
   */
  static String path(PgBinaryCursor c) {
    int closed = c.u8("path closed flag");
    if (closed > 1) {
      throw new IllegalArgumentException("path closed flag is " + closed + "; 0 or 1 expected");
    }
    return points(new StringBuilder(64), c, count(c, "path"), closed == 1 ? '(' : '[').toString();
  }

  /** {@code poly_send}: int32 count, points; {@code poly_out}: {@code ((x1,y1),...)}. */
  static String polygon(PgBinaryCursor c) {
    return points(new StringBuilder(64), c, count(c, "polygon"), '(').toString();
  }

  /** {@code line_send}: A, B, C; {@code line_out}: {@code {A,B,C}}. */
  static String line(PgBinaryCursor c) {
    StringBuilder sb = new StringBuilder(48);
    sb.append('{').append(PgFloatOutput.format(c.f64("line A"))).append(',');
    sb.append(PgFloatOutput.format(c.f64("line B"))).append(',');
    sb.append(PgFloatOutput.format(c.f64("line C"))).append('}');
    return sb.toString();
  }

  /** {@code circle_send}: center, radius; {@code circle_out}: {@code <(x,y),r>}. */
  static String circle(PgBinaryCursor c) {
    StringBuilder sb = new StringBuilder(48).append('<');
    points(sb, c, 1, ' ');
    sb.append(',').append(PgFloatOutput.format(c.f64("circle radius"))).append('>');
    return sb.toString();
  }

  /** Reads an int32 point count and checks that many 16-byte points can follow. */
  private static int count(PgBinaryCursor c, String type) {
    int n = c.i32(type + " point count");
    if (n < 0 || n > c.remaining() / 16) {
      throw new IllegalArgumentException(
          type + " point count " + n + " does not fit the " + c.remaining() + " bytes left");
    }
    return n;
  }

  /**
   * {@code path_encode}: points as {@code (x,y)} joined by {@code ,}, enclosed in {@code (...)}
   * (closed), {@code [...]} (open) or nothing (delimiter {@code ' '}).
   */
  private static StringBuilder points(StringBuilder sb, PgBinaryCursor c, int n, char open) {
    if (open != ' ') {
      sb.append(open);
    }
    for (int i = 0; i < n; i++) {
      if (i > 0) {
        sb.append(',');
      }
      sb.append('(').append(PgFloatOutput.format(c.f64("x")));
      sb.append(',').append(PgFloatOutput.format(c.f64("y"))).append(')');
    }
    if (open == '(') {
      sb.append(')');
    } else if (open == '[') {
      sb.append(']');
    }
    return sb;
  }
}
