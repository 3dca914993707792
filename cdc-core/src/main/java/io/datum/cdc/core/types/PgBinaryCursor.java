package io.datum.cdc.core.types;

import java.nio.charset.StandardCharsets;

/**
 * A bounds-checked big-endian cursor over one binary value (the bytes a type's send function
 * produced; they are written with {@code pq_send*}, src/backend/libpq/pqformat.c, which is
 * big-endian). Every read checks the bounds first, so a value that is too short or lies about a
 * length raises {@link IllegalArgumentException} naming the byte offset within the value, never an
 * index exception. Not thread-safe; one per value, or one reused value after value ({@link #reset})
 * by a decoder that never lets it escape.
 */
final class PgBinaryCursor {

  private byte[] buf;
  private int start;
  private int end;
  private int pos;

  /**
   * @param buf the array holding the value
   * @param offset the index of the value's first byte
   * @param length the value's length in bytes
   * @throws IllegalArgumentException if the range lies outside the array
   */
  PgBinaryCursor(byte[] buf, int offset, int length) {
    reset(buf, offset, length);
  }

  /**
   * Points the cursor at another value.
   *
   * @param buf the array holding the value
   * @param offset the index of the value's first byte
   * @param length the value's length in bytes
   * @return this cursor
   * @throws IllegalArgumentException if the range lies outside the array
   */
  PgBinaryCursor reset(byte[] buf, int offset, int length) {
    if (offset < 0 || length < 0 || offset > buf.length - length) {
      throw new IllegalArgumentException(
          "value range [" + offset + ", +" + length + ") outside an array of " + buf.length);
    }
    this.buf = buf;
    this.start = offset;
    this.end = offset + length;
    this.pos = offset;
    return this;
  }

  /** Returns the offset of the next byte within the value. */
  int offset() {
    return pos - start;
  }

  /** Returns the number of bytes not read yet. */
  int remaining() {
    return end - pos;
  }

  /** Returns the array (for reading counted bytes in place). */
  byte[] array() {
    return buf;
  }

  /** Returns the array index of the next byte. */
  int index() {
    return pos;
  }

  private void need(int n, String what) {
    if (end - pos < n) {
      throw new IllegalArgumentException(
          what
              + " needs "
              + n
              + " bytes at offset "
              + offset()
              + " but "
              + (end - pos)
              + " are left (value length "
              + (end - start)
              + ")");
    }
  }

  /** Reads one byte as unsigned, {@code [0, 255]}. */
  int u8(String what) {
    need(1, what);
    return buf[pos++] & 0xFF;
  }

  /** Reads a signed 16-bit integer. */
  short i16(String what) {
    need(2, what);
    short v = (short) (((buf[pos] & 0xFF) << 8) | (buf[pos + 1] & 0xFF));
    pos += 2;
    return v;
  }

  /** Reads a signed 32-bit integer. */
  int i32(String what) {
    need(4, what);
    int v =
        ((buf[pos] & 0xFF) << 24)
            | ((buf[pos + 1] & 0xFF) << 16)
            | ((buf[pos + 2] & 0xFF) << 8)
            | (buf[pos + 3] & 0xFF);
    pos += 4;
    return v;
  }

  /** Reads a signed 64-bit integer. */
  long i64(String what) {
    need(8, what);
    long v = 0;
    for (int i = 0; i < 8; i++) {
      v = (v << 8) | (buf[pos + i] & 0xFF);
    }
    pos += 8;
    return v;
  }

  /** Reads an IEEE 754 double. */
  double f64(String what) {
    return Double.longBitsToDouble(i64(what));
  }

  /**
   * Skips {@code n} bytes that the caller reads in place from {@link #array()}.
   *
   * @return the array index of the first skipped byte
   */
  int skip(int n, String what) {
    if (n < 0) {
      throw new IllegalArgumentException(
          "negative length " + n + " of " + what + " at offset " + offset());
    }
    need(n, what);
    int at = pos;
    pos += n;
    return at;
  }

  /** Reads {@code n} bytes of UTF-8 (the client encoding pgjdbc sets). */
  String utf8(int n, String what) {
    int at = skip(n, what);
    return decodeUtf8(buf, at, n);
  }

  /** Reads the rest of the value as UTF-8. */
  String restUtf8(String what) {
    return utf8(remaining(), what);
  }

  /** Reads a NUL-terminated UTF-8 string and consumes the NUL. */
  String cstring(String what) {
    for (int i = pos; i < end; i++) {
      if (buf[i] == 0) {
        String s = decodeUtf8(buf, pos, i - pos);
        pos = i + 1;
        return s;
      }
    }
    throw new IllegalArgumentException(what + " at offset " + offset() + " has no NUL terminator");
  }

  /** Throws unless every byte was read. */
  void expectEnd(String what) {
    if (pos != end) {
      throw new IllegalArgumentException(
          what
              + ": "
              + (end - pos)
              + " unexpected trailing bytes at offset "
              + offset()
              + " (value length "
              + (end - start)
              + ")");
    }
  }

  /**
   * Decodes UTF-8 the way {@link PgTextValues#decode(int, byte[], int, int)} does for text values
   * ({@code new String(..., UTF_8)}), so that both formats give the same String for the same bytes.
   * The walsender converts text to the client encoding, UTF-8 with pgjdbc, in either format ({@code
   * pq_sendtext}, src/backend/libpq/pqformat.c).
   */
  static String decodeUtf8(byte[] b, int offset, int length) {
    return new String(b, offset, length, StandardCharsets.UTF_8);
  }
}
