package io.datum.cdc;

/**
 * A PostgreSQL WAL position (log sequence number): an unsigned 64-bit byte offset into the
 * write-ahead log.
 *
 * <p>Printed and parsed in PostgreSQL's {@code X/X} form: the high and low 32 bits in upper-case
 * hexadecimal without leading zeros, for example {@code 0/16B3748} (PostgreSQL docs, 8.20 pg_lsn
 * Type). Ordering is unsigned, so {@code FFFFFFFF/FFFFFFFF} is the largest LSN.
 *
 * <p>Instances are immutable and safe to share between threads.
 */
public final class PgLsn implements Comparable<PgLsn> {

  /**
   * The LSN {@code 0/0}; PostgreSQL's {@code InvalidXLogRecPtr}, which also means "no position".
   */
  public static final PgLsn ZERO = new PgLsn(0L);

  private final long value;

  private PgLsn(long value) {
    this.value = value;
  }

  /**
   * Returns the LSN of the given raw value.
   *
   * @param value the 64-bit WAL position, read as unsigned
   * @return the LSN, never null
   */
  public static PgLsn of(long value) {
    return value == 0L ? ZERO : new PgLsn(value);
  }

  /**
   * Parses PostgreSQL's {@code X/X} text form, as printed by {@code pg_current_wal_lsn()}.
   *
   * @param text one to eight hexadecimal digits, a slash, one to eight hexadecimal digits
   * @return the LSN, never null
   * @throws IllegalArgumentException if {@code text} is null or not of that form; the message
   *     quotes the text
   */
  public static PgLsn parse(String text) {
    if (text == null) {
      throw new IllegalArgumentException("LSN must not be null");
    }
    int slash = text.indexOf('/');
    if (slash < 1 || slash > 8 || text.length() - slash - 1 < 1 || text.length() - slash - 1 > 8) {
      throw new IllegalArgumentException(
          "not an LSN of the form X/X (hexadecimal): \"" + text + '"');
    }
    try {
      long high = parseHex(text, 0, slash);
      long low = parseHex(text, slash + 1, text.length());
      return of((high << 32) | low);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(
          "not an LSN of the form X/X (hexadecimal): \"" + text + '"', e);
    }
  }

  private static long parseHex(String text, int from, int to) {
    long result = 0;
    for (int i = from; i < to; i++) {
      char c = text.charAt(i);
      // ASCII hexadecimal only, as PostgreSQL's pg_lsn_in; Character.digit would take other scripts
      int digit =
          c >= '0' && c <= '9'
              ? c - '0'
              : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
      if (digit < 0) {
        throw new NumberFormatException("bad hexadecimal digit at index " + i);
      }
      result = (result << 4) | digit;
    }
    return result;
  }

  /**
   * Returns the raw 64-bit value; compare values with {@link Long#compareUnsigned}.
   *
   * @return the WAL position in bytes, as an unsigned long
   */
  public long asLong() {
    return value;
  }

  /** Returns true if this is {@code 0/0}. */
  public boolean isZero() {
    return value == 0L;
  }

  /**
   * Returns whether this LSN is after {@code other} in WAL order (unsigned).
   *
   * @param other the LSN to compare with, not null
   * @return true if this LSN is strictly greater
   */
  public boolean isAfter(PgLsn other) {
    return Long.compareUnsigned(value, other.value) > 0;
  }

  /**
   * Returns whether this LSN is before {@code other} in WAL order (unsigned).
   *
   * @param other the LSN to compare with, not null
   * @return true if this LSN is strictly smaller
   */
  public boolean isBefore(PgLsn other) {
    return Long.compareUnsigned(value, other.value) < 0;
  }

  @Override
  public int compareTo(PgLsn other) {
    return Long.compareUnsigned(value, other.value);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof PgLsn && ((PgLsn) o).value == value;
  }

  @Override
  public int hashCode() {
    return Long.hashCode(value);
  }

  /** Returns the {@code X/X} form, upper-case hexadecimal, for example {@code 0/16B3748}. */
  @Override
  public String toString() {
    // formatted directly: this runs for every event a JSON line or a log names
    byte[] text = new byte[17];
    int n = hex(text, 0, value >>> 32);
    text[n++] = '/';
    n = hex(text, n, value & 0xFFFF_FFFFL);
    return new String(text, 0, n, java.nio.charset.StandardCharsets.ISO_8859_1);
  }

  private static final byte[] HEX =
      "0123456789ABCDEF".getBytes(java.nio.charset.StandardCharsets.US_ASCII);

  /**
   * Writes {@code v} (below 2^32) in upper-case hexadecimal without leading zeros at {@code at}.
   */
  private static int hex(byte[] text, int at, long v) {
    int digits = v == 0 ? 1 : (67 - Long.numberOfLeadingZeros(v)) >> 2;
    for (int i = at + digits - 1; i >= at; i--) {
      text[i] = HEX[(int) (v & 0xF)];
      v >>>= 4;
    }
    return at + digits;
  }
}
