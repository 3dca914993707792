package io.datum.cdc.core.types;

import ch.randelshofer.fastdoubleparser.JavaDoubleParser;
import ch.randelshofer.fastdoubleparser.JavaFloatParser;
import io.datum.cdc.event.PgJson;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.UUID;

/**
 * Parsers for the text output of PostgreSQL's numeric, uuid and bytea types (PostgreSQL docs, 8.1
 * Numeric Types, 8.4 Binary Data Types, 8.12 UUID Type; {@code extra_float_digits=3} gives the
 * shortest exact float output). Used by {@link PgTextValues}; they throw {@link
 * IllegalArgumentException} (often {@link NumberFormatException}) for text of another form.
 */
final class PgScalarValues {

  private PgScalarValues() {}

  /** {@code boolout}: {@code t} or {@code f} (bool.c). */
  static Boolean parseBool(String text) {
    if (text.equals("t")) {
      return Boolean.TRUE;
    } else if (text.equals("f")) {
      return Boolean.FALSE;
    }
    throw new IllegalArgumentException("boolean output is 't' or 'f'");
  }

  /** {@code int2out} from UTF-8 bytes. */
  static Short parseInt2(byte[] b, int offset, int length) {
    return (short) parseInteger(b, offset, length, Short.MIN_VALUE, Short.MAX_VALUE);
  }

  /** {@code int4out} from UTF-8 bytes. */
  static Integer parseInt4(byte[] b, int offset, int length) {
    return (int) parseInteger(b, offset, length, Integer.MIN_VALUE, Integer.MAX_VALUE);
  }

  /** {@code int8out} from UTF-8 bytes. */
  static Long parseInt8(byte[] b, int offset, int length) {
    return parseInteger(b, offset, length, Long.MIN_VALUE, Long.MAX_VALUE);
  }

  /** {@code oidout} (unsigned 32 bits) from UTF-8 bytes, as a Long. */
  static Long parseOid(byte[] b, int offset, int length) {
    return parseInteger(b, offset, length, 0, 0xFFFF_FFFFL);
  }

  /** {@code oidout} (unsigned 32 bits), as a Long. */
  static Long parseOid(String text) {
    return Integer.toUnsignedLong(Integer.parseUnsignedInt(text));
  }

  /** {@code float4out}. */
  static Float parseFloat4(String text) {
    // FastDoubleParser: the same correctly rounded value as Float.parseFloat, faster
    return JavaFloatParser.parseFloat(checkFloat(text));
  }

  /** {@code float8out}. */
  static Double parseFloat8(String text) {
    // FastDoubleParser: the same correctly rounded value as Double.parseDouble, without its
    // big-integer slow path for the 15 to 17 significant digits float8out prints
    return JavaDoubleParser.parseDouble(checkFloat(text));
  }

  /** {@code byteaout} text (hex, or escape). */
  static byte[] parseBytea(String text) {
    byte[] raw = text.getBytes(StandardCharsets.UTF_8);
    return parseBytea(raw, 0, raw.length);
  }

  /** {@code json_out}, {@code jsonb_out}: the text, kept as it is. */
  static PgJson parseJson(String text) {
    return new PgJson(text);
  }

  /** Parses a decimal integer from bytes without building a String, checking its range. */
  static long parseInteger(byte[] b, int offset, int length, long min, long max) {
    int i = offset;
    int end = offset + length;
    boolean negative = i < end && b[i] == '-';
    if (negative) {
      i++;
    }
    if (i == end) {
      throw new NumberFormatException("not an integer");
    }
    long value = 0; // accumulated negatively, so Long.MIN_VALUE fits
    for (; i < end; i++) {
      int digit = b[i] - '0';
      if (digit < 0 || digit > 9) {
        throw new NumberFormatException("not an integer");
      }
      if (value < (Long.MIN_VALUE + digit) / 10) {
        throw new NumberFormatException("integer out of range");
      }
      value = value * 10 - digit;
    }
    if (!negative) {
      if (value == Long.MIN_VALUE) {
        throw new NumberFormatException("integer out of range");
      }
      value = -value;
    }
    if (value < min || value > max) {
      throw new NumberFormatException("integer out of range [" + min + ", " + max + "]");
    }
    return value;
  }

  /** Rejects what Java's float parser accepts but PostgreSQL never prints (hex, suffixes). */
  static String checkFloat(String text) {
    if (text.equals("NaN") || text.equals("Infinity") || text.equals("-Infinity")) {
      return text;
    }
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      if (!(c >= '0' && c <= '9') && c != '-' && c != '+' && c != '.' && c != 'e' && c != 'E') {
        throw new NumberFormatException("not a floating-point number");
      }
    }
    return text;
  }

  /** Parses numeric output; {@code NaN} and {@code ±Infinity} become the Double values. */
  static Object parseNumeric(String text) {
    switch (text) {
      case "NaN":
        return Double.NaN;
      case "Infinity":
        return Double.POSITIVE_INFINITY;
      case "-Infinity":
        return Double.NEGATIVE_INFINITY;
      default:
        try {
          return new BigDecimal(text);
        } catch (NumberFormatException e) {
          throw new NumberFormatException("not a numeric value");
        }
    }
  }

  /** Parses the canonical 8-4-4-4-12 hexadecimal form (either case). */
  static UUID parseUuid(String text) {
    if (text.length() != 36
        || text.charAt(8) != '-'
        || text.charAt(13) != '-'
        || text.charAt(18) != '-'
        || text.charAt(23) != '-') {
      throw new IllegalArgumentException("not a UUID of the form 8-4-4-4-12 hexadecimal digits");
    }
    long high = 0;
    long low = 0;
    int digits = 0;
    for (int i = 0; i < 36; i++) {
      char c = text.charAt(i);
      if (c == '-' && (i == 8 || i == 13 || i == 18 || i == 23)) {
        continue;
      }
      int d = Character.digit(c, 16);
      if (d < 0) {
        throw new IllegalArgumentException("bad hexadecimal digit in UUID at index " + i);
      }
      if (digits++ < 16) {
        high = (high << 4) | d;
      } else {
        low = (low << 4) | d;
      }
    }
    return new UUID(high, low);
  }

  /** Parses bytea output: hex format {@code \x0a0b}, or the escape format. */
  static byte[] parseBytea(byte[] b, int offset, int length) {
    int end = offset + length;
    if (length >= 2 && b[offset] == '\\' && b[offset + 1] == 'x') {
      if ((length & 1) != 0) {
        throw new IllegalArgumentException("bytea hex output has an odd number of digits");
      }
      byte[] out = new byte[(length - 2) / 2];
      for (int i = offset + 2, o = 0; i < end; i += 2, o++) {
        int high = Character.digit(b[i], 16);
        int low = Character.digit(b[i + 1], 16);
        if (high < 0 || low < 0) {
          throw new IllegalArgumentException(
              "bad hexadecimal digit in bytea at index " + (i - offset));
        }
        out[o] = (byte) ((high << 4) | low);
      }
      return out;
    }
    byte[] out = new byte[length];
    int o = 0;
    for (int i = offset; i < end; ) {
      if (b[i] != '\\') {
        out[o++] = b[i++];
      } else if (i + 1 < end && b[i + 1] == '\\') {
        out[o++] = '\\';
        i += 2;
      } else if (i + 3 < end
          && b[i + 1] >= '0'
          && b[i + 1] <= '3'
          && isOctal(b[i + 2])
          && isOctal(b[i + 3])) {
        out[o++] = (byte) (((b[i + 1] - '0') << 6) | ((b[i + 2] - '0') << 3) | (b[i + 3] - '0'));
        i += 4;
      } else {
        throw new IllegalArgumentException("bad escape in bytea at index " + (i - offset));
      }
    }
    return Arrays.copyOf(out, o);
  }

  private static boolean isOctal(byte c) {
    return c >= '0' && c <= '7';
  }
}
