package io.datum.cdc.core.types;

import java.util.Locale;

/**
 * Turns the binary send format of the builtin types that {@link PgTextValues} keeps as their text
 * into exactly the text their output function prints, so that a column gives the same String in
 * either format. Each method names the send and output functions it mirrors (files under
 * src/backend/utils/adt/). Text is assumed to reach the client as UTF-8 (pgjdbc sets {@code
 * client_encoding=UTF8}), and floats to print with {@code extra_float_digits > 0}, as the source
 * sets.
 *
 * <p>Three outputs depend on settings or versions the binary value does not carry:
 *
 * <ul>
 *   <li>{@code money} ({@code cash_out}, cash.c) follows {@code lc_monetary}; this renders the
 *       {@code C}/{@code POSIX} locale's form ({@code $1,234.56}, {@code -$1,234.56}), which {@code
 *       en_US} also prints. Under other monetary locales text and binary differ.
 *   <li>{@code "char"} bytes with the high bit set print as {@code \ooo} (octal) since PostgreSQL
 *       15 ({@code charout}, char.c); PostgreSQL 14 printed the raw byte. This renders the 15+
 *       form.
 *   <li>{@code pg_lsn} prints {@code %X/%X} up to PostgreSQL 18 ({@code pg_lsn_out}, pg_lsn.c); the
 *       development branch after 18 pads the low half to 8 digits. This renders {@code %X/%X}.
 * </ul>
 *
 * <p>Methods throw {@link IllegalArgumentException} for a value of the wrong size or shape and for
 * a type this class does not render.
 */
final class PgBinaryText {

  private PgBinaryText() {}

  /** {@code xml_send}, {@code textsend} ({@code refcursor}), {@code unknownsend}: the text. */
  static String utf8(PgBinaryCursor c) {
    return c.restUtf8("text");
  }

  /** {@code jsonpath_send}: format version 1, then the text. */
  static String jsonpath(PgBinaryCursor c) {
    return versioned(c, "jsonpath");
  }

  /** {@code cash_send} printed by {@code cash_out}, see {@link #money(long)}. */
  static String cash(PgBinaryCursor c) {
    return money(c.i64("money"));
  }

  /** {@code pg_lsn_send}: int64, printed by {@code pg_lsn_out}, see {@link #lsn}. */
  static String pgLsn(PgBinaryCursor c) {
    return lsn(c.i64("pg_lsn"));
  }

  /**
   * {@code tidsend}: uint32 block, uint16 offset; {@code tidout}: {@code (block,offset)} (tid.c).
   */
  static String tid(PgBinaryCursor c) {
    return "("
        + Integer.toUnsignedString(c.i32("tid block"))
        + ","
        + (c.i16("tid offset") & 0xFFFF)
        + ")";
  }

  /** {@code xidsend}/{@code cidsend}: uint32; {@code xidout}/{@code cidout}: decimal (xid.c). */
  static String xid(PgBinaryCursor c) {
    return Integer.toUnsignedString(c.i32("xid"));
  }

  /** {@code xid8send}: uint64; {@code xid8out}: decimal (xid.c). */
  static String xid8(PgBinaryCursor c) {
    return Long.toUnsignedString(c.i64("xid8"));
  }

  /** {@code int2vectorsend}, printed by {@code int2vectorout}, see {@link #vector}. */
  static String int2vector(PgBinaryCursor c) {
    return vector(c, PgBuiltinType.INT2.oid());
  }

  /** {@code oidvectorsend}, printed by {@code oidvectorout}, see {@link #vector}. */
  static String oidvector(PgBinaryCursor c) {
    return vector(c, PgBuiltinType.OID.oid());
  }

  /** A one-byte format version (1) followed by UTF-8 text: jsonb_send, jsonpath_send. */
  static String versioned(PgBinaryCursor c, String type) {
    int version = c.u8(type + " format version");
    if (version != 1) {
      throw new IllegalArgumentException(
          "unsupported " + type + " binary format version " + version + " (only 1 exists)");
    }
    return c.restUtf8(type);
  }

  /**
   * {@code cash_send} (an int64 count of cents) printed by {@code cash_out} in the C locale: {@code
   * $}, thousands separated by {@code ,}, two fraction digits, {@code -} before the currency symbol
   * for negative amounts (cash.c).
   */
  static String money(long cents) {
    String digits = Long.toUnsignedString(cents < 0 ? -cents : cents); // MIN_VALUE: unsigned 2^63
    if (digits.length() < 3) {
      digits = "0".repeat(3 - digits.length()) + digits;
    }
    String whole = digits.substring(0, digits.length() - 2);
    StringBuilder sb = new StringBuilder(cents < 0 ? "-$" : "$");
    for (int i = 0; i < whole.length(); i++) {
      if (i > 0 && (whole.length() - i) % 3 == 0) {
        sb.append(',');
      }
      sb.append(whole.charAt(i));
    }
    return sb.append('.').append(digits, digits.length() - 2, digits.length()).toString();
  }

  /** {@code bit_send}/{@code varbit_send}: int32 bit count, then the bits, MSB first (varbit.c). */
  static String bits(PgBinaryCursor c) {
    int count = c.i32("bit length");
    if (count < 0) {
      throw new IllegalArgumentException("negative bit length " + count);
    }
    int bytes = (int) ((count + 7L) / 8);
    if (c.remaining() != bytes) {
      throw new IllegalArgumentException(
          "bit string of " + count + " bits needs " + bytes + " bytes, got " + c.remaining());
    }
    StringBuilder sb = new StringBuilder(count);
    int at = c.skip(bytes, "bits");
    byte[] b = c.array();
    for (int i = 0; i < count; i++) {
      sb.append((b[at + (i >>> 3)] & (0x80 >>> (i & 7))) != 0 ? '1' : '0');
    }
    return sb.toString();
  }

  /** {@code pg_lsn_out}: {@code %X/%X} of the high and low 32 bits (pg_lsn.c, up to 18). */
  static String lsn(long lsn) {
    return Integer.toHexString((int) (lsn >>> 32)).toUpperCase(Locale.ROOT)
        + '/'
        + Integer.toHexString((int) lsn).toUpperCase(Locale.ROOT);
  }

  /**
   * {@code pg_snapshot_send}/{@code txid_snapshot_send}: int32 nxip, int64 xmin, int64 xmax, nxip
   * int64 xids; printed {@code xmin:xmax:xip,xip} (xid8funcs.c).
   */
  static String snapshot(PgBinaryCursor c) {
    int nxip = c.i32("snapshot xip count");
    if (nxip < 0 || nxip > c.remaining() / 8) {
      throw new IllegalArgumentException("snapshot xip count " + nxip + " does not fit the value");
    }
    StringBuilder sb = new StringBuilder();
    sb.append(Long.toUnsignedString(c.i64("snapshot xmin"))).append(':');
    sb.append(Long.toUnsignedString(c.i64("snapshot xmax"))).append(':');
    for (int i = 0; i < nxip; i++) {
      if (i > 0) {
        sb.append(',');
      }
      sb.append(Long.toUnsignedString(c.i64("snapshot xip")));
    }
    return sb.toString();
  }

  /**
   * {@code int2vectorsend}/{@code oidvectorsend} send a one-dimensional array ({@code array_send});
   * {@code int2vectorout}/{@code oidvectorout} print the elements separated by spaces (int.c,
   * oid.c).
   */
  private static String vector(PgBinaryCursor c, int elementOid) {
    PgBinaryArrays.Elements e = PgBinaryArrays.read(c, elementOid);
    if (e.dims().length > 1) {
      throw new IllegalArgumentException("a vector has one dimension, got " + e.dims().length);
    }
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < e.starts().length; i++) {
      if (e.lengths()[i] < 0) {
        throw new IllegalArgumentException("vector element " + (i + 1) + " is NULL");
      }
      if (i > 0) {
        sb.append(' ');
      }
      sb.append(PgBinaryValues.decode(elementOid, c.array(), e.starts()[i], e.lengths()[i]));
    }
    return sb.toString();
  }

  /**
   * {@code tsvectorsend}: int32 lexeme count, then per lexeme its text NUL-terminated, uint16
   * position count and uint16 positions (weight in the top 2 bits). {@code tsvectorout} prints
   * {@code 'lexeme':1A,2} separated by spaces, doubling {@code '} and {@code \} inside the quotes,
   * weights 3..1 as A..C and 0 (D) not at all (tsvector.c).
   */
  static String tsvector(PgBinaryCursor c) {
    int count = c.i32("tsvector lexeme count");
    if (count < 0 || count > c.remaining() / 3) {
      throw new IllegalArgumentException("tsvector lexeme count " + count + " does not fit");
    }
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < count; i++) {
      if (i > 0) {
        sb.append(' ');
      }
      String lexeme = c.cstring("tsvector lexeme");
      sb.append('\'');
      for (int k = 0; k < lexeme.length(); k++) {
        char ch = lexeme.charAt(k);
        if (ch == '\'' || ch == '\\') {
          sb.append(ch);
        }
        sb.append(ch);
      }
      sb.append('\'');
      int positions = c.i16("tsvector position count") & 0xFFFF;
      for (int p = 0; p < positions; p++) {
        int pos = c.i16("tsvector position") & 0xFFFF;
        sb.append(p == 0 ? ':' : ',').append(pos & 0x3FFF);
        switch (pos >>> 14) {
          case 3 -> sb.append('A');
          case 2 -> sb.append('B');
          case 1 -> sb.append('C');
          default -> {} // weight D is not printed
        }
      }
    }
    return sb.toString();
  }
}
