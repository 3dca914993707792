package io.datum.cdc.core.types;

import java.time.ZoneId;
import java.util.function.IntFunction;

/**
 * Decodes the binary send format of one column type, builtin or user-defined, to the Java value
 * that {@link PgTextValues} gives for the same value's text, and renders it as the type's output
 * function's text (for the types that nest: arrays, composites, ranges). Built once per type oid by
 * {@link PgTypeCatalog} from what {@code pg_type} says of the type; immutable.
 *
 * <p>The Java values, as text mode gives them ({@code PgOutputDecoder} maps a column to a builtin
 * type only when the Type message names one that {@link PgTextValues} lists, and keeps every other
 * value as its text):
 *
 * <ul>
 *   <li>builtin types: as {@link PgBinaryValues#decode(int, byte[], int, int)};
 *   <li>enums: the label, a String ({@code enum_send} sends the label's text, {@code enum_out}
 *       prints it; src/backend/utils/adt/enum.c);
 *   <li>domains: their base type's value (a domain has its base type's send and output functions,
 *       {@code typsend}/{@code typoutput} copied by DefineDomain, src/backend/commands/typecmds.c;
 *       the Type message names the innermost base type, {@code getBaseType} in {@code
 *       logicalrep_write_typ}, src/backend/replication/logical/proto.c);
 *   <li>arrays of user types (of enums, domains, composites, ranges), composites, ranges and
 *       multiranges: their output function's text, a String, rendered from the binary form as
 *       {@code array_out}, {@code record_out}, {@code range_out} and {@code multirange_out} print
 *       it (see the nested classes).
 * </ul>
 *
 * <p>Malformed bytes raise {@link IllegalArgumentException} (never an index exception); a type
 * without a known binary format raises it too, naming the type.
 */
public abstract class PgBinaryCodec {

  private final int oid;
  private final String name;

  PgBinaryCodec(int oid, String name) {
    this.oid = oid;
    this.name = name;
  }

  /** Returns the type oid. */
  final int oid() {
    return oid;
  }

  /** Returns {@code schema.name (oid N)} of the type, for messages. */
  public final String describe() {
    return name + " (oid " + Integer.toUnsignedString(oid) + ")";
  }

  /**
   * Decodes a whole binary value.
   *
   * @param buf the array
   * @param offset the value's first byte
   * @param length the value's length
   * @return the value as text mode gives it (see the class description); never null
   * @throws IllegalArgumentException if the bytes are malformed or the type cannot be decoded
   */
  public Object value(byte[] buf, int offset, int length) {
    return text(new PgBinaryCursor(buf, offset, length));
  }

  /**
   * Renders a whole binary value as the type's output function prints it.
   *
   * @param c the value; consumed entirely
   * @return the text
   * @throws IllegalArgumentException if the bytes are malformed or the type cannot be rendered
   */
  abstract String text(PgBinaryCursor c);

  /** Returns the type's array delimiter ({@code pg_type.typdelim}), {@code ,} for all but box. */
  char delimiter() {
    return ',';
  }

  /** Returns the oid a binary array of this type may carry in its header besides its own. */
  int baseOid() {
    return oid;
  }

  /**
   * Decodes the type's text output (a {@code 't'} value of a text-mode stream) to the same value
   * {@link #value} gives for its binary form: the one mapping of both formats (docs/pgoutput.md,
   * "Types"). By default the text itself: enums, composites, ranges, multiranges and the types
   * whose values stay their output text.
   *
   * @param text the value's output text, as the server printed it
   * @return the value; never null
   * @throws IllegalArgumentException if the text does not parse as the type, or the type cannot be
   *     decoded from its text (an array type no longer in the catalog)
   */
  public Object textValue(String text) {
    return text;
  }

  /**
   * Returns whether arrays of this type are given as Lists of element values (true: typed and
   * list-form builtins, enums, composites, ranges, multiranges, domains over those) or as their
   * {@code array_out} text (false: the builtins whose arrays stay text, such as the geometric
   * types, and types that cannot be decoded).
   */
  boolean listArrays() {
    return true;
  }

  /**
   * Returns true for the codec of a type oid the catalog did not hold when it was asked (dropped,
   * or never seen): nothing but the stream describes such a type.
   */
  boolean missing() {
    return false;
  }

  /** A builtin type: {@link PgBinaryValues} for the value, {@link PgBinaryOutput} for the text. */
  static final class Builtin extends PgBinaryCodec {
    private final ZoneId zone;
    private final boolean decodes;

    /**
     * @param oid a builtin type oid for which {@link PgBinaryOutput#renders} is true
     * @param name the type's name, for messages
     * @param zone the session time zone, for {@code timestamptz} text; null if unknown
     */
    Builtin(int oid, String name, ZoneId zone) {
      super(oid, name);
      this.zone = zone;
      this.decodes = PgBinaryValues.supports(oid);
    }

    @Override
    public Object value(byte[] buf, int offset, int length) {
      return decodes
          ? PgBinaryValues.decode(oid(), buf, offset, length)
          : super.value(buf, offset, length);
    }

    @Override
    String text(PgBinaryCursor c) {
      return PgBinaryOutput.text(oid(), c, zone);
    }

    @Override
    public Object textValue(String text) {
      return PgTextValues.decode(oid(), text);
    }

    @Override
    boolean listArrays() {
      PgBuiltinType type = PgBuiltinType.of(oid());
      return type != null && type.arrays() == PgBuiltinType.ArrayForm.LIST;
    }

    @Override
    char delimiter() {
      PgBuiltinType type = PgBuiltinType.of(oid());
      return type == null ? ',' : type.delimiter();
    }
  }

  /** An enum ({@code typtype 'e'}): {@code enum_send} sends the label as text (enum.c). */
  static final class EnumType extends PgBinaryCodec {
    EnumType(int oid, String name) {
      super(oid, name);
    }

    @Override
    String text(PgBinaryCursor c) {
      return c.restUtf8("enum label");
    }
  }

  /** A domain ({@code typtype 'd'}): its base type's format, value and text. */
  static final class Domain extends PgBinaryCodec {
    private final PgBinaryCodec base;

    Domain(int oid, String name, PgBinaryCodec base) {
      super(oid, name);
      this.base = base;
    }

    @Override
    public Object value(byte[] buf, int offset, int length) {
      return base.value(buf, offset, length);
    }

    @Override
    String text(PgBinaryCursor c) {
      return base.text(c);
    }

    @Override
    public Object textValue(String text) {
      return base.textValue(text);
    }

    @Override
    boolean listArrays() {
      return base.listArrays();
    }

    @Override
    char delimiter() {
      return base.delimiter();
    }

    @Override
    int baseOid() {
      return base.baseOid();
    }
  }

  /**
   * An array of a user type ({@code typelem} set, {@code array_subscript_handler}): {@code
   * array_send} (arrayfuncs.c, see {@link PgBinaryArrays}). Its value is a List of the element
   * codec's values (nested per dimension, NULL elements as null) when {@link #listArrays} holds for
   * the element type, else the text {@code array_out} prints with the element type's delimiter and
   * output text; its text is parsed by {@link PgArrayValues} into the same value.
   */
  static final class ArrayOf extends PgBinaryCodec {
    private final PgBinaryCodec element;

    ArrayOf(int oid, String name, PgBinaryCodec element) {
      super(oid, name);
      this.element = element;
    }

    @Override
    public Object value(byte[] buf, int offset, int length) {
      PgBinaryCursor c = new PgBinaryCursor(buf, offset, length);
      return element.listArrays()
          ? PgBinaryArrays.decodeList(c, element.oid(), element.baseOid(), element)
          : text(c);
    }

    @Override
    String text(PgBinaryCursor c) {
      return PgBinaryArrays.renderText(
          c, element.oid(), element.baseOid(), element.delimiter(), element::text);
    }

    @Override
    public Object textValue(String text) {
      return element.listArrays() ? PgArrayValues.parse(text, element.delimiter(), element) : text;
    }

    @Override
    boolean listArrays() {
      return false;
    }
  }

  /**
   * An array type the catalog no longer holds, known to be an array only from its Type message (its
   * name begins with {@code _}, as {@code makeArrayTypeName} names every array type,
   * src/backend/catalog/pg_type.c). In binary form the array's header names its element type
   * ({@code array_send} writes {@code element_type}), so the value decodes as {@link ArrayOf} with
   * that element type's codec (a builtin type, one the catalog still holds, or one it does not
   * hold, decoded as a value of it in a column would be); the header must be a valid one. Its text
   * does not name the element type: {@link #textValue} fails.
   */
  static final class SentArray extends PgBinaryCodec {
    private final IntFunction<PgBinaryCodec> resolver;

    /**
     * @param oid the array type's oid
     * @param name the name the Type message gave, for messages
     * @param resolver codecs by element type oid
     */
    SentArray(int oid, String name, IntFunction<PgBinaryCodec> resolver) {
      super(oid, name);
      this.resolver = resolver;
    }

    @Override
    public Object value(byte[] buf, int offset, int length) {
      return elementArray(buf, offset, length).value(buf, offset, length);
    }

    @Override
    String text(PgBinaryCursor c) {
      return elementArray(c.array(), c.index(), c.remaining()).text(c);
    }

    private PgBinaryCodec elementArray(byte[] buf, int offset, int length) {
      if (length < 12) {
        throw new IllegalArgumentException(
            "array type " + describe() + " is not in pg_type and the value is no array header");
      }
      int elementOid = new PgBinaryCursor(buf, offset + 8, 4).i32("array element type");
      PgBinaryCodec element = resolver.apply(elementOid);
      return new ArrayOf(oid(), describe(), element);
    }

    @Override
    public Object textValue(String text) {
      throw new IllegalArgumentException(
          "array type "
              + describe()
              + " is not in pg_type (dropped before the catalog was asked) and an array's text"
              + " does not name its element type");
    }

    @Override
    boolean listArrays() {
      return false;
    }

    @Override
    boolean missing() {
      return true;
    }
  }

  /**
   * A range ({@code typtype 'r'}). {@code range_send} (src/backend/utils/adt/rangetypes.c): one
   * flags byte ({@code RANGE_EMPTY} 0x01, {@code RANGE_LB_INC} 0x02, {@code RANGE_UB_INC} 0x04,
   * {@code RANGE_LB_INF} 0x08, {@code RANGE_UB_INF} 0x10, {@code RANGE_LB_NULL} 0x20, {@code
   * RANGE_UB_NULL} 0x40, src/include/utils/rangetypes.h), then each bound that exists ({@code
   * RANGE_HAS_LBOUND}: none of empty, infinite, null) as int32 length and the subtype's send
   * format. {@code range_out}/{@code range_deparse} print {@code empty}, or {@code [} or {@code (},
   * the lower bound, {@code ,}, the upper bound, {@code ]} or {@code )}; each bound through {@code
   * range_bound_escape}: double-quoted when empty or holding {@code " \ ( ) [ ] ,} or white space,
   * with {@code "} and {@code \} doubled.
   */
  static final class Range extends PgBinaryCodec {
    static final int EMPTY = 0x01;
    static final int LB_INC = 0x02;
    static final int UB_INC = 0x04;
    static final int LB_INF = 0x08;
    static final int UB_INF = 0x10;
    static final int LB_NULL = 0x20;
    static final int UB_NULL = 0x40;

    private final PgBinaryCodec subtype;

    Range(int oid, String name, PgBinaryCodec subtype) {
      super(oid, name);
      this.subtype = subtype;
    }

    @Override
    String text(PgBinaryCursor c) {
      int flags = c.u8("range flags");
      if ((flags & EMPTY) != 0) {
        if (c.remaining() != 0) { // the text only for a failure, not per value
          c.expectEnd("empty range " + describe());
        }
        return "empty";
      }
      StringBuilder sb = new StringBuilder(32).append((flags & LB_INC) != 0 ? '[' : '(');
      if ((flags & (LB_INF | LB_NULL)) == 0) {
        sb.append(escape(bound(c, "lower"), "()[],"));
      }
      sb.append(',');
      if ((flags & (UB_INF | UB_NULL)) == 0) {
        sb.append(escape(bound(c, "upper"), "()[],"));
      }
      if (c.remaining() != 0) { // the text only for a failure, not per value
        c.expectEnd("range " + describe());
      }
      return sb.append((flags & UB_INC) != 0 ? ']' : ')').toString();
    }

    private String bound(PgBinaryCursor c, String which) {
      int length = c.i32("range " + which + " bound length");
      int at = c.skip(length, "range " + which + " bound");
      try {
        return subtype.text(new PgBinaryCursor(c.array(), at, length));
      } catch (RuntimeException e) {
        throw new IllegalArgumentException(
            "range " + which + " bound of type " + subtype.describe() + ": " + e.getMessage(), e);
      }
    }
  }

  /**
   * A multirange ({@code typtype 'm'}). {@code multirange_send} (multirangetypes.c): int32 range
   * count, then per range int32 length and {@code range_send}'s bytes; {@code multirange_out}
   * prints {@code {}} around the ranges' {@code range_out} text separated by {@code ,}, unquoted.
   */
  static final class Multirange extends PgBinaryCodec {
    private final PgBinaryCodec range;

    Multirange(int oid, String name, PgBinaryCodec range) {
      super(oid, name);
      this.range = range;
    }

    @Override
    String text(PgBinaryCursor c) {
      int count = c.i32("multirange range count");
      if (count < 0 || count > c.remaining() / 5) { // each range: 4-byte length + flags byte
        throw new IllegalArgumentException(
            "multirange range count "
                + count
                + " does not fit the "
                + c.remaining()
                + " bytes left");
      }
      StringBuilder sb = new StringBuilder(16 * count + 2).append('{');
      for (int i = 0; i < count; i++) {
        int length = c.i32("multirange range length");
        int at = c.skip(length, "multirange range " + (i + 1));
        if (i > 0) {
          sb.append(',');
        }
        try {
          sb.append(range.text(new PgBinaryCursor(c.array(), at, length)));
        } catch (RuntimeException e) {
          throw new IllegalArgumentException(
              "multirange range " + (i + 1) + ": " + e.getMessage(), e);
        }
      }
      if (c.remaining() != 0) { // the text only for a failure, not per value
        c.expectEnd("multirange " + describe());
      }
      return sb.append('}').toString();
    }
  }

  /**
   * A composite ({@code typtype 'c'}). {@code record_send} (src/backend/utils/adt/rowtypes.c):
   * int32 count of the non-dropped attributes, then per attribute its type oid ({@code atttypid}, a
   * domain's own oid), int32 length ({@code -1} for NULL) and the type's send format. {@code
   * record_out} prints {@code (} fields separated by {@code ,} {@code )}, a NULL field as nothing,
   * other fields double-quoted when empty or holding {@code " \ ( ) ,} or white space ({@code
   * isspace}), with {@code "} and {@code \} doubled inside the quotes.
   *
   * <p>Field types come from the value itself; the attribute types known from the catalog serve as
   * a cache, and a field oid they do not list (an attribute added since) is resolved through the
   * catalog once.
   */
  static final class Composite extends PgBinaryCodec {
    private final int[] fieldOids;
    private final PgBinaryCodec[] fields;
    private final IntFunction<PgBinaryCodec> resolver;

    /**
     * @param fieldOids the attribute type oids the catalog lists, in attribute order
     * @param fields their codecs
     * @param resolver codecs of field type oids not in {@code fieldOids}
     */
    Composite(
        int oid,
        String name,
        int[] fieldOids,
        PgBinaryCodec[] fields,
        IntFunction<PgBinaryCodec> resolver) {
      super(oid, name);
      this.fieldOids = fieldOids;
      this.fields = fields;
      this.resolver = resolver;
    }

    @Override
    String text(PgBinaryCursor c) {
      int count = c.i32("composite field count");
      if (count < 0 || count > c.remaining() / 8) { // each field: oid and length
        throw new IllegalArgumentException(
            "composite field count "
                + count
                + " does not fit the "
                + c.remaining()
                + " bytes left");
      }
      StringBuilder sb = new StringBuilder(16 * count + 2).append('(');
      for (int i = 0; i < count; i++) {
        int fieldOid = c.i32("composite field type oid");
        int length = c.i32("composite field length");
        if (i > 0) {
          sb.append(',');
        }
        if (length == -1) {
          continue; // NULL: nothing between the commas
        }
        int at = c.skip(length, "composite field " + (i + 1));
        PgBinaryCodec field =
            i < fieldOids.length && fieldOids[i] == fieldOid ? fields[i] : resolver.apply(fieldOid);
        try {
          sb.append(escape(field.text(new PgBinaryCursor(c.array(), at, length)), "(),"));
        } catch (RuntimeException e) {
          throw new IllegalArgumentException(
              "field " + (i + 1) + " of type " + field.describe() + ": " + e.getMessage(), e);
        }
      }
      if (c.remaining() != 0) { // the text only for a failure, not per value
        c.expectEnd("composite " + describe());
      }
      return sb.append(')').toString();
    }
  }

  /**
   * A type the catalog does not hold (dropped before it was asked), decoded from what its binary
   * value says of itself, since pgoutput does not send a type's kind:
   *
   * <ul>
   *   <li>a <b>record</b>: {@code record_send}'s form is self-describing (field count, then each
   *       field's type oid and length, rowtypes.c). A value that parses as exactly that, with at
   *       least one field, every field type builtin or known to the catalog, and every field
   *       decodable, is rendered as {@code record_out} prints it;
   *   <li>an <b>enum label</b>, only where the column's Type message named a type outside {@code
   *       pg_catalog} ({@code labels}): {@code enum_send} sends the label's text. A value of 0 to
   *       63 bytes (NAMEDATALEN - 1, the longest label) of valid UTF-8 without NUL or other control
   *       characters is taken as the label; ranges and multiranges never look like that (their
   *       flags byte is a control character, and their lengths hold NUL bytes).
   * </ul>
   *
   * Any other value fails, naming the type, so that the decode-error policy decides. Text values
   * are the text itself, as for any user type that is not an array.
   */
  static final class Unidentified extends PgBinaryCodec {
    private static final int MAX_LABEL_BYTES = 63;

    private final IntFunction<PgBinaryCodec> fields;
    private final boolean labels;

    /**
     * @param oid the type oid
     * @param name the type's name as the stream gave it, or {@code type}
     * @param fields codecs of the field type oids a record may name: builtin or known to the
     *     catalog (others fail, so the value is not taken as a record); must not query the catalog
     * @param labels whether a value may be taken as an enum label
     */
    Unidentified(int oid, String name, IntFunction<PgBinaryCodec> fields, boolean labels) {
      super(oid, name);
      this.fields = fields;
      this.labels = labels;
    }

    @Override
    String text(PgBinaryCursor c) {
      String notRecord;
      int at = c.index();
      int length = c.remaining();
      if (length >= 12 && c.array()[at] == 0) {
        try {
          PgBinaryCursor copy = new PgBinaryCursor(c.array(), at, length);
          String record =
              new Composite(oid(), describe(), new int[0], new PgBinaryCodec[0], fields).text(copy);
          c.skip(length, "record");
          return record;
        } catch (IllegalArgumentException e) {
          notRecord = e.getMessage();
        }
      } else {
        notRecord = "too short or no leading NUL byte for a field count";
      }
      if (labels && length <= MAX_LABEL_BYTES && isLabelText(c.array(), at, length)) {
        return c.restUtf8("enum label");
      }
      throw new IllegalArgumentException(
          "type "
              + describe()
              + " is not in pg_type (dropped before the catalog was asked), pgoutput does not"
              + " send a type's kind, and the value is not a record ("
              + notRecord
              + ")"
              + (labels ? " nor an enum label's text" : ""));
    }

    private static boolean isLabelText(byte[] b, int offset, int length) {
      for (int i = offset; i < offset + length; i++) {
        int u = b[i] & 0xFF;
        if (u < 0x20 || u == 0x7F) {
          return false;
        }
      }
      try {
        java.nio.charset.StandardCharsets.UTF_8
            .newDecoder()
            .decode(java.nio.ByteBuffer.wrap(b, offset, length));
        return true;
      } catch (java.nio.charset.CharacterCodingException e) {
        return false; // not UTF-8: not a label; the caller reports the value as undecodable
      }
    }

    @Override
    boolean missing() {
      return true;
    }
  }

  /** A type whose binary format is not known: every value fails, naming the type and why. */
  static final class Unsupported extends PgBinaryCodec {
    private final String reason;
    private final boolean missing;

    Unsupported(int oid, String name, String reason) {
      this(oid, name, reason, false);
    }

    /**
     * @param missing true when the type is not in the catalog at all (see {@link #missing()})
     */
    Unsupported(int oid, String name, String reason, boolean missing) {
      super(oid, name);
      this.reason = reason;
      this.missing = missing;
    }

    @Override
    boolean listArrays() {
      return false;
    }

    @Override
    boolean missing() {
      return missing;
    }

    @Override
    String text(PgBinaryCursor c) {
      throw new IllegalArgumentException(
          "type " + describe() + " cannot be decoded in binary mode: " + reason);
    }
  }

  /**
   * Quotes a value as {@code record_out} and {@code range_bound_escape} do: in double quotes when
   * it is empty or holds one of {@code specials}, {@code "}, {@code \} or white space (C {@code
   * isspace}: space, tab, newline, vertical tab, form feed, carriage return), doubling {@code "}
   * and {@code \} inside.
   */
  static String escape(String value, String specials) {
    boolean quote = value.isEmpty();
    for (int i = 0; i < value.length() && !quote; i++) {
      char ch = value.charAt(i);
      quote =
          ch == '"'
              || ch == '\\'
              || specials.indexOf(ch) >= 0
              || ch == ' '
              || ch == '\t'
              || ch == '\n'
              || ch == 0x0B
              || ch == '\f'
              || ch == '\r';
    }
    if (!quote) {
      return value;
    }
    StringBuilder sb = new StringBuilder(value.length() + 4).append('"');
    for (int i = 0; i < value.length(); i++) {
      char ch = value.charAt(i);
      if (ch == '"' || ch == '\\') {
        sb.append(ch);
      }
      sb.append(ch);
    }
    return sb.append('"').toString();
  }
}
