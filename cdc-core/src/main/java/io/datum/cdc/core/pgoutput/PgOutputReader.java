package io.datum.cdc.core.pgoutput;

import io.datum.cdc.CdcDecodingException;
import java.nio.charset.StandardCharsets;

/**
 * A bounds-checked big-endian cursor over one pgoutput message inside a byte array, as written by
 * PostgreSQL's {@code pq_send*} functions (src/backend/libpq/pqformat.c; PostgreSQL docs, 55.7
 * Message Data Types and 55.9 Logical Replication Message Formats). Every read checks the bounds
 * itself, so a truncated or malformed message becomes a {@link CdcDecodingException} naming the
 * message type and the offset within the message, never an index exception.
 *
 * <p>Reused across messages by one {@link PgOutputDecoder}; not thread-safe.
 */
public final class PgOutputReader {

  private byte[] buf = new byte[0];
  private int base;
  private int pos;
  private int end;
  private byte type;

  /**
   * Points the reader at a message.
   *
   * @param buf the array holding the message
   * @param from the index of the message's first byte (its type byte)
   * @param to the index after its last byte, greater than {@code from}
   */
  void reset(byte[] buf, int from, int to) {
    this.buf = buf;
    this.base = from;
    this.pos = from;
    this.end = to;
    this.type = buf[from];
  }

  /** Returns the array the message lives in (for decoding values in place). */
  byte[] array() {
    return buf;
  }

  /** Returns the current offset within the message (0 is the type byte). */
  int offset() {
    return pos - base;
  }

  /** Returns the message length in bytes. */
  int length() {
    return end - base;
  }

  private void need(int n) {
    if (end - pos < n) {
      throw error(
          offset(),
          "message truncated: "
              + n
              + " bytes needed, "
              + (end - pos)
              + " left (message length "
              + length()
              + ")");
    }
  }

  /** Reads a signed byte. */
  byte readByte() {
    need(1);
    return buf[pos++];
  }

  /** Reads a byte as unsigned, {@code [0, 255]}. */
  int readUnsignedByte() {
    return readByte() & 0xFF;
  }

  /** Reads a big-endian unsigned 16-bit integer (column counts are {@code uint16}). */
  int readUnsignedInt16() {
    need(2);
    int v = ((buf[pos] & 0xFF) << 8) | (buf[pos + 1] & 0xFF);
    pos += 2;
    return v;
  }

  /** Reads a big-endian 32-bit integer. */
  int readInt32() {
    need(4);
    int v =
        ((buf[pos] & 0xFF) << 24)
            | ((buf[pos + 1] & 0xFF) << 16)
            | ((buf[pos + 2] & 0xFF) << 8)
            | (buf[pos + 3] & 0xFF);
    pos += 4;
    return v;
  }

  /** Reads a big-endian 64-bit integer. */
  long readInt64() {
    need(8);
    long v = 0;
    for (int i = 0; i < 8; i++) {
      v = (v << 8) | (buf[pos + i] & 0xFF);
    }
    pos += 8;
    return v;
  }

  /**
   * Reads an {@code Int32} length followed by that many bytes, leaving them in place.
   *
   * @param what what the bytes are, for errors
   * @param column the column they belong to, for errors, or null
   * @return the array index of the first byte; the length is {@code offset() - offsetOf(start)}
   */
  int readCountedBytes(String what, String column) {
    int at = offset();
    int len = readInt32();
    if (len < 0 || end - pos < len) {
      String of = what + (column == null ? "" : " of column \"" + column + '"');
      throw error(
          at,
          len < 0
              ? "negative length " + len + " of " + of
              : "message truncated: "
                  + of
                  + " of "
                  + len
                  + " bytes needs more than the "
                  + (end - pos)
                  + " bytes left (message length "
                  + length()
                  + ")");
    }
    int start = pos;
    pos += len;
    return start;
  }

  /** Reads a NUL-terminated UTF-8 string. */
  String readString() {
    int start = pos;
    for (int i = pos; i < end; i++) {
      if (buf[i] == 0) {
        pos = i + 1;
        return new String(buf, start, i - start, StandardCharsets.UTF_8);
      }
    }
    throw error(offset(), "string without NUL terminator (message length " + length() + ")");
  }

  /** Throws unless every byte of the message was consumed. */
  void expectEnd() {
    if (pos != end) {
      throw error(offset(), (end - pos) + " unexpected trailing bytes");
    }
  }

  /**
   * Builds the exception for a failure at an offset.
   *
   * @param offset the offset within the message where decoding failed
   * @param what what was wrong
   * @return the exception, to be thrown by the caller
   */
  CdcDecodingException error(int offset, String what) {
    return error(offset, what, null);
  }

  /**
   * Builds the exception for a failure at an offset, with a cause.
   *
   * @param offset the offset within the message where decoding failed
   * @param what what was wrong
   * @param cause the underlying failure, may be null
   * @return the exception, to be thrown by the caller
   */
  CdcDecodingException error(int offset, String what, Throwable cause) {
    return new CdcDecodingException(
        "pgoutput " + messageName(type) + " message, offset " + offset + ": " + what, cause);
  }

  /** Returns the name of a message type for errors, for example {@code Insert ('I')}. */
  public static String messageName(byte type) {
    String name =
        switch (type) {
          case 'B' -> "Begin";
          case 'C' -> "Commit";
          case 'O' -> "Origin";
          case 'R' -> "Relation";
          case 'Y' -> "Type";
          case 'I' -> "Insert";
          case 'U' -> "Update";
          case 'D' -> "Delete";
          case 'T' -> "Truncate";
          case 'M' -> "Message";
          case 'S' -> "Stream Start";
          case 'E' -> "Stream Stop";
          case 'c' -> "Stream Commit";
          case 'A' -> "Stream Abort";
          case 'b' -> "Begin Prepare";
          case 'P' -> "Prepare";
          case 'K' -> "Commit Prepared";
          case 'r' -> "Rollback Prepared";
          case 'p' -> "Stream Prepare";
          default -> "unknown";
        };
    return name + " (" + describeByte(type) + ")";
  }

  /** Returns a byte as {@code 'c'} if printable ASCII, else as {@code 0xNN}. */
  static String describeByte(byte b) {
    return b >= 0x20 && b < 0x7F ? "'" + (char) b + "'" : String.format("0x%02X", b & 0xFF);
  }

  /** Returns the offset within the message of an array index. */
  int offsetOf(int arrayIndex) {
    return arrayIndex - base;
  }
}
