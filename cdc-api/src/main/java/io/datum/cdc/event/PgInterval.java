package io.datum.cdc.event;

import java.util.Locale;

/**
 * A PostgreSQL {@code interval}: months, days and microseconds, kept separate as PostgreSQL keeps
 * them (a month is not a fixed number of days; PostgreSQL docs, 8.5.4 Interval Input).
 *
 * <p>PostgreSQL 17 added infinite intervals ({@code 'infinity'::interval}), stored as every field
 * at its maximum ({@code INTERVAL_NOEND}) or at its minimum ({@code INTERVAL_NOBEGIN};
 * src/include/datatype/timestamp.h): {@link #INFINITY} and {@link #NEGATIVE_INFINITY} are those
 * values.
 *
 * @param months whole months (years are 12 months), may be negative
 * @param days whole days, may be negative
 * @param microseconds the time part in microseconds, may be negative
 */
public record PgInterval(int months, int days, long microseconds) {

  /** PostgreSQL 17's {@code 'infinity'::interval}: every field at its maximum. */
  public static final PgInterval INFINITY =
      new PgInterval(Integer.MAX_VALUE, Integer.MAX_VALUE, Long.MAX_VALUE);

  /** PostgreSQL 17's {@code '-infinity'::interval}: every field at its minimum. */
  public static final PgInterval NEGATIVE_INFINITY =
      new PgInterval(Integer.MIN_VALUE, Integer.MIN_VALUE, Long.MIN_VALUE);

  /** Returns true for {@link #INFINITY} and {@link #NEGATIVE_INFINITY}. */
  public boolean isInfinite() {
    return equals(INFINITY) || equals(NEGATIVE_INFINITY);
  }

  /**
   * Returns the ISO-8601 duration form used by the JSON-lines format, for example {@code
   * P1Y2M3DT4H5M6.5S}; {@code PT0S} for a zero interval. Negative parts carry their sign: {@code
   * P-1Y-2MT-3H}. The infinite intervals are {@code infinity} and {@code -infinity}, as for the
   * other temporal types.
   *
   * @return the ISO-8601 text, not null
   */
  public String toIso8601() {
    if (equals(INFINITY)) {
      return "infinity";
    }
    if (equals(NEGATIVE_INFINITY)) {
      return "-infinity";
    }
    StringBuilder sb = new StringBuilder("P");
    int years = months / 12;
    int restMonths = months % 12;
    if (years != 0) {
      sb.append(years).append('Y');
    }
    if (restMonths != 0) {
      sb.append(restMonths).append('M');
    }
    if (days != 0) {
      sb.append(days).append('D');
    }
    if (microseconds != 0) {
      sb.append('T');
      long hours = microseconds / 3_600_000_000L;
      long rest = microseconds % 3_600_000_000L;
      long minutes = rest / 60_000_000L;
      rest = rest % 60_000_000L;
      if (hours != 0) {
        sb.append(hours).append('H');
      }
      if (minutes != 0) {
        sb.append(minutes).append('M');
      }
      if (rest != 0) {
        long seconds = rest / 1_000_000L;
        long micros = Math.abs(rest % 1_000_000L);
        if (rest < 0 && seconds == 0) {
          sb.append('-');
        }
        sb.append(seconds);
        if (micros != 0) {
          String fraction = String.format(Locale.ROOT, "%06d", micros);
          int end = fraction.length();
          while (fraction.charAt(end - 1) == '0') {
            end--;
          }
          sb.append('.').append(fraction, 0, end);
        }
        sb.append('S');
      }
    }
    if (sb.length() == 1) {
      sb.append("T0S");
    }
    return sb.toString();
  }

  @Override
  public String toString() {
    return toIso8601();
  }
}
