package io.datum.cdc.core.snapshot;

/**
 * The text format of COPY, as PostgreSQL reads it back (src/backend/commands/copyfromparse.c,
 * {@code CopyReadAttributesText}) and writes it (src/backend/commands/copyto.c, {@code
 * CopyAttributeOutText}; PostgreSQL docs, COPY, "Text Format"): fields separated by a tab, a row
 * ended by a newline, {@code \N} for NULL, and a backslash escaping the byte after it: {@code \b \f
 * \n \r \t \v} the control characters, {@code \NNN} one to three octal digits, {@code \xHH} one or
 * two hex digits (a byte), any other character itself (so {@code \\} is a backslash, and a
 * backslash before a tab makes the tab data). Whether a field is NULL is decided on its raw bytes:
 * only a field that is exactly {@code \N} is; {@code \N} inside a longer field is an {@code N}.
 *
 * <p>The format works on bytes: with a UTF-8 client encoding no byte of a multi-byte character is
 * below 0x80, so the scan never mistakes part of a character for a tab, newline or backslash.
 */
final class CopyText {

  private CopyText() {}

  /**
   * Finds the end of the field starting at {@code start}: the first tab or newline not escaped by a
   * backslash, or {@code end}.
   *
   * @param line the row's bytes
   * @param start the field's first byte
   * @param end the end of the row's bytes (exclusive)
   * @return the field's end (exclusive), negated minus one ({@code -end - 1}) if the field holds a
   *     backslash and must be un-escaped with {@link #unescape}
   */
  static int fieldEnd(byte[] line, int start, int end) {
    boolean escaped = false;
    int i = start;
    while (i < end) {
      byte b = line[i];
      if (b == '\t' || b == '\n') {
        break;
      }
      if (b == '\\') {
        escaped = true;
        i += 2;
      } else {
        i++;
      }
    }
    if (i > end) {
      i = end; // a backslash as the row's last byte escapes nothing
    }
    return escaped ? -i - 1 : i;
  }

  /**
   * Returns true if the raw field is exactly {@code \N}, COPY's NULL.
   *
   * @param line the row's bytes
   * @param start the field's first byte
   * @param end the field's end (exclusive)
   * @return whether the field is NULL
   */
  static boolean isNull(byte[] line, int start, int end) {
    return end - start == 2 && line[start] == '\\' && line[start + 1] == 'N';
  }

  /**
   * Un-escapes a field into {@code out}, which must hold at least {@code end - start} bytes (the
   * result is never longer than its input).
   *
   * @param line the row's bytes
   * @param start the field's first byte
   * @param end the field's end (exclusive)
   * @param out where the un-escaped bytes go, from index 0
   * @return the number of bytes written
   */
  static int unescape(byte[] line, int start, int end, byte[] out) {
    int n = 0;
    int i = start;
    while (i < end) {
      byte b = line[i++];
      if (b != '\\') {
        out[n++] = b;
        continue;
      }
      if (i >= end) {
        break; // a trailing backslash: copyfromparse.c drops it
      }
      byte c = line[i++];
      switch (c) {
        case '0', '1', '2', '3', '4', '5', '6', '7' -> {
          int value = c - '0';
          if (i < end && isOctal(line[i])) {
            value = (value << 3) + (line[i++] - '0');
            if (i < end && isOctal(line[i])) {
              value = (value << 3) + (line[i++] - '0');
            }
          }
          out[n++] = (byte) value;
        }
        case 'x' -> {
          int h = i < end ? hex(line[i]) : -1;
          if (h < 0) {
            out[n++] = 'x';
          } else {
            i++;
            int value = h;
            int h2 = i < end ? hex(line[i]) : -1;
            if (h2 >= 0) {
              i++;
              value = (value << 4) + h2;
            }
            out[n++] = (byte) value;
          }
        }
        case 'b' -> out[n++] = '\b';
        case 'f' -> out[n++] = '\f';
        case 'n' -> out[n++] = '\n';
        case 'r' -> out[n++] = '\r';
        case 't' -> out[n++] = '\t';
        case 'v' -> out[n++] = 0x0b;
        default -> out[n++] = c;
      }
    }
    return n;
  }

  private static boolean isOctal(byte b) {
    return b >= '0' && b <= '7';
  }

  private static int hex(byte b) {
    if (b >= '0' && b <= '9') {
      return b - '0';
    }
    if (b >= 'a' && b <= 'f') {
      return b - 'a' + 10;
    }
    if (b >= 'A' && b <= 'F') {
      return b - 'A' + 10;
    }
    return -1;
  }
}
