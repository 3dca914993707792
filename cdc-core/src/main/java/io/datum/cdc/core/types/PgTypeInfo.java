package io.datum.cdc.core.types;

/**
 * What {@code pg_type} (and {@code pg_range}, {@code pg_attribute}, {@code pg_enum}) says of one
 * type, as far as binary decoding and the column's {@link io.datum.cdc.event.PgType} need it
 * (PostgreSQL docs, 53.64 pg_type, 53.44 pg_range).
 *
 * @param oid the type oid
 * @param schema the type's schema
 * @param name the type's name
 * @param kind {@code typtype}: {@code b} base, {@code c} composite, {@code d} domain, {@code e}
 *     enum, {@code p} pseudo, {@code r} range, {@code m} multirange
 * @param baseType a domain's {@code typbasetype}, else 0
 * @param element the element type of an array type ({@code typelem} where {@code typsubscript} is
 *     {@code array_subscript_handler}), else 0
 * @param delimiter {@code typdelim}, the separator of the type's elements in {@code array_out}
 * @param hasSend whether {@code typsend} is set; without it pgoutput sends the type as text
 * @param rangeSubtype a range's {@code pg_range.rngsubtype}, else 0
 * @param multirangeOf a multirange's range type ({@code pg_range.rngtypid} where {@code
 *     rngmultitypid} is this type), else 0
 * @param attributeTypes a composite's non-dropped attribute types in order ({@code
 *     pg_attribute.atttypid} of {@code typrelid}), else empty
 * @param baseModifier a domain's {@code typtypmod}, else -1
 * @param enumLabels an enum's labels in {@code enumsortorder} ({@code pg_enum}), else empty
 */
record PgTypeInfo(
    int oid,
    String schema,
    String name,
    char kind,
    int baseType,
    int element,
    char delimiter,
    boolean hasSend,
    int rangeSubtype,
    int multirangeOf,
    int[] attributeTypes,
    int baseModifier,
    java.util.List<String> enumLabels) {

  /** Returns {@code schema.name}. */
  String qualifiedName() {
    return schema + '.' + name;
  }

  /** Returns the oids this type's codec needs first (base, element, subtype, range, fields). */
  int[] dependencies() {
    if (element != 0) {
      return new int[] {element};
    }
    return switch (kind) {
      case 'd' -> new int[] {baseType};
      case 'r' -> new int[] {rangeSubtype};
      case 'm' -> new int[] {multirangeOf};
      case 'c' -> attributeTypes;
      default -> new int[0];
    };
  }
}
