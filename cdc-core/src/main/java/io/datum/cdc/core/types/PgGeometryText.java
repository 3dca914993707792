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

  /**
   * Renders a geometric value.
   *
   * @param typeOid point 600, lseg 601, path 602, box 603, polygon 604, line 628 or circle 718
   * @param c the value
   * @return for example {@code (1,2)}, {@code [(1,2),(3,4)]}, {@code ((0,0),(1,1))}, {@code
   *     (3,4),(1,2)}, {@code {1,-1,0}}, {@code <(1,2),3>}
   */
  static String render(int typeOid, PgBinaryCursor c) {
    StringBuilder sb = new StringBuilder(64);
    switch (typeOid) {
      case PgBinaryText.POINT -> points(sb, c, 1, ' '); // "(x,y)"
      case PgBinaryText.LSEG -> points(sb, c, 2, '['); // "[(x1,y1),(x2,y2)]"
      case PgBinaryText.BOX -> points(sb, c, 2, ' '); // "(high),(low)"
      case PgBinaryText.PATH -> {
        int closed = c.u8("path closed flag");
        if (closed > 1) {
          throw new IllegalArgumentException("path closed flag is " + closed + "; 0 or 1 expected");
        }
        points(sb, c, count(c, "path"), closed == 1 ? '(' : '[');
      }
      case PgBinaryText.POLYGON -> points(sb, c, count(c, "polygon"), '(');
      case PgBinaryText.LINE -> {
        sb.append('{').append(PgFloatOutput.format(c.f64("line A"))).append(',');
        sb.append(PgFloatOutput.format(c.f64("line B"))).append(',');
        sb.append(PgFloatOutput.format(c.f64("line C"))).append('}');
      }
      case PgBinaryText.CIRCLE -> {
        sb.append('<');
        points(sb, c, 1, ' ');
        sb.append(',').append(PgFloatOutput.format(c.f64("circle radius"))).append('>');
      }
      default -> throw new IllegalArgumentException("type oid " + typeOid + " is not geometric");
    }
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
  private static void points(StringBuilder sb, PgBinaryCursor c, int n, char open) {
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
  }
}
