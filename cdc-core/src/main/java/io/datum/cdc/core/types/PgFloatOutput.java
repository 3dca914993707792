package io.datum.cdc.core.types;

import java.math.BigDecimal;
import java.math.MathContext;
import java.math.RoundingMode;

/**
 * PostgreSQL's text output of a {@code float8} with {@code extra_float_digits > 0} (the source sets
 * 3): {@code float8out_internal} (src/backend/utils/adt/float.c) then calls {@code
 * double_to_shortest_decimal_buf} (src/common/d2s.c, Ryu), which prints the shortest decimal that
 * reads back as the same double, in fixed notation when the decimal exponent is in {@code [-4, 15)}
 * and as {@code d.ddde+XX} (at least two exponent digits) otherwise; {@code NaN}, {@code Infinity},
 * {@code -Infinity}, {@code 0} and {@code -0} are spelled out ({@code copy_special_str}). Used for
 * the coordinates of the geometric types, whose output functions print each number with {@code
 * float8out_internal}.
 *
 * <p>The shortest digits are found by search, not by Ryu: for each length from 1 to 17 digits the
 * two decimals of that length nearest the exact value (rounded down and up) are tried, and the
 * first length for which one of them lies strictly inside the double's rounding interval wins; of
 * two that both do, the nearer one, and on a tie the one with an even last digit (Ryu's rule where
 * it detects the tie). Java 17's {@link Double#toString} is not shortest in all cases, so it is not
 * used.
 */
final class PgFloatOutput {

  private PgFloatOutput() {}

  /**
   * Formats a double as PostgreSQL's {@code float8out} does with {@code extra_float_digits > 0}.
   *
   * @param v any double
   * @return the text, for example {@code 1.5}, {@code 1e+300}, {@code 0.0001}, {@code 1e-05}
   */
  static String format(double v) {
    if (Double.isNaN(v)) {
      return "NaN";
    } else if (Double.isInfinite(v)) {
      return v > 0 ? "Infinity" : "-Infinity";
    } else if (v == 0) {
      return (Double.doubleToRawLongBits(v) < 0) ? "-0" : "0";
    }
    return layout(shortest(v), v < 0, 15);
  }

  /**
   * Formats a float as PostgreSQL's {@code float4out} does with {@code extra_float_digits > 0}:
   * {@code float_to_shortest_decimal_buf} (src/common/f2s.c, Ryu for binary32), fixed notation when
   * the decimal exponent is in {@code [-4, FLT_DIG)} = {@code [-4, 6)}, else {@code d.ddde+XX}.
   *
   * @param v any float
   * @return the text, for example {@code 1.5}, {@code 1e+06}, {@code 3.4028235e+38}
   */
  static String format(float v) {
    if (Float.isNaN(v)) {
      return "NaN";
    } else if (Float.isInfinite(v)) {
      return v > 0 ? "Infinity" : "-Infinity";
    } else if (v == 0) {
      return (Float.floatToRawIntBits(v) < 0) ? "-0" : "0";
    }
    float a = Math.abs(v);
    BigDecimal exact = new BigDecimal(a);
    BigDecimal below = new BigDecimal(Math.nextDown(a));
    BigDecimal lower = exact.add(below).divide(BigDecimal.valueOf(2));
    float next = Math.nextUp(a);
    BigDecimal upper =
        Float.isInfinite(next)
            ? exact.add(exact.subtract(below).divide(BigDecimal.valueOf(2)))
            : exact.add(new BigDecimal(next)).divide(BigDecimal.valueOf(2));
    return layout(search(exact, lower, upper, 9), v < 0, 6);
  }

  /** Prints a positive shortest decimal in fixed or exponent notation, as Ryu's to_chars does. */
  private static String layout(BigDecimal decimal, boolean negative, int fixedBelow) {
    BigDecimal shortest = decimal.stripTrailingZeros();
    String digits = shortest.unscaledValue().toString();
    int exp = digits.length() - 1 - shortest.scale(); // decimal exponent of the first digit
    StringBuilder sb = new StringBuilder(24);
    if (negative) {
      sb.append('-');
    }
    if (exp >= -4 && exp < fixedBelow) {
      sb.append(shortest.toPlainString());
    } else {
      sb.append(digits.charAt(0));
      if (digits.length() > 1) {
        sb.append('.').append(digits, 1, digits.length());
      }
      sb.append('e').append(exp < 0 ? '-' : '+');
      int a = Math.abs(exp);
      if (a < 10) {
        sb.append('0');
      }
      sb.append(a);
    }
    return sb.toString();
  }

  /**
   * Returns the shortest decimal strictly inside {@code v}'s rounding interval (finite, non-zero
   * {@code v}). The bounds themselves (the exact midpoints to the neighbouring doubles) are
   * excluded even though a round-half-even reader maps them to {@code v}: PostgreSQL builds Ryu
   * with {@code STRICTLY_SHORTEST 0} (src/common/ryu_common.h), so {@code acceptBounds} is false
   * and, for example, the double nearest 1e23 prints as {@code 9.999999999999999e+22}.
   */
  private static BigDecimal shortest(double v) {
    double a = Math.abs(v);
    BigDecimal exact = new BigDecimal(a);
    BigDecimal below = new BigDecimal(Math.nextDown(a));
    BigDecimal lower = exact.add(below).divide(BigDecimal.valueOf(2)); // exact: a binary fraction
    double next = Math.nextUp(a);
    BigDecimal upper =
        Double.isInfinite(next)
            ? exact.add(exact.subtract(below).divide(BigDecimal.valueOf(2)))
            : exact.add(new BigDecimal(next)).divide(BigDecimal.valueOf(2));
    return search(exact, lower, upper, 17);
  }

  /**
   * The shortest decimal strictly between {@code lower} and {@code upper}, nearest {@code exact}
   * (ties to an even last digit), with at most {@code maxDigits} significant digits.
   */
  private static BigDecimal search(
      BigDecimal exact, BigDecimal lower, BigDecimal upper, int maxDigits) {
    for (int p = 1; p <= maxDigits; p++) {
      BigDecimal down = exact.round(new MathContext(p, RoundingMode.DOWN));
      BigDecimal up = exact.round(new MathContext(p, RoundingMode.UP));
      boolean downOk = down.compareTo(lower) > 0;
      boolean upOk = up.compareTo(upper) < 0;
      if (downOk && upOk) {
        int cmp = exact.subtract(down).compareTo(up.subtract(exact));
        if (cmp != 0) {
          return cmp < 0 ? down : up;
        }
        return down.unscaledValue().testBit(0) ? up : down;
      } else if (downOk) {
        return down;
      } else if (upOk) {
        return up;
      }
    }
    return exact.round(new MathContext(maxDigits, RoundingMode.HALF_EVEN)); // not reached
  }
}
