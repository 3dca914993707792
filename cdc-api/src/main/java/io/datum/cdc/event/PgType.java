package io.datum.cdc.event;

import java.util.List;
import java.util.Objects;

/**
 * What the catalog says of a column's data type, as far as a consumer needs it to map the column's
 * values without asking the database: the type's oid, schema and name, its kind, and for a derived
 * type the type it derives from (PostgreSQL docs, 53.64 {@code pg_type}; 53.20 {@code pg_enum}).
 * The source fills it once per new type oid, never per row: builtin types from a table of {@code
 * src/include/catalog/pg_type.dat} ({@link #builtin}), other types from {@code pg_type}. Immutable;
 * types are shared between the columns that use them.
 *
 * @param oid the type oid (unsigned, as {@code int})
 * @param schema the type's schema ({@code typnamespace}), {@code pg_catalog} for builtin types; not
 *     null, empty when unknown
 * @param name the type's name ({@code typname}, e.g. {@code int4}, {@code _int4} for its array, a
 *     user type's own name); not null, empty when unknown
 * @param kind the kind of type, not null
 * @param element an array's element type, else null
 * @param base a domain's base type ({@code typbasetype}), else null
 * @param baseModifier a domain's {@code typtypmod}: the type modifier of its base type (a domain
 *     over {@code numeric(10,2)} has that numeric's), else -1
 * @param enumLabels an enum's labels in {@code enumsortorder}, else empty; not null
 */
public record PgType(
    int oid,
    String schema,
    String name,
    Kind kind,
    PgType element,
    PgType base,
    int baseModifier,
    List<String> enumLabels) {

  /** PostgreSQL's {@code FirstNormalObjectId} (src/include/access/transam.h). */
  public static final int FIRST_NORMAL_OID = 16384;

  /**
   * The kind of a type: {@code pg_type.typtype} ({@code b} base, {@code c} composite, {@code d}
   * domain, {@code e} enum, {@code p} pseudo, {@code r} range, {@code m} multirange), except that
   * an array type (a base type whose {@code typsubscript} is {@code array_subscript_handler}, its
   * {@code typelem} the element) is {@link #ARRAY}; and {@link #UNKNOWN} for a type the source
   * could not describe (dropped before the catalog was asked, or no catalog to ask).
   */
  public enum Kind {
    /** {@code typtype 'b'}, not an array: {@code int4}, {@code text}, an extension's base type. */
    BASE,
    /** An array type ({@code typtype 'b'} with an element type); see {@link PgType#element()}. */
    ARRAY,
    /** {@code typtype 'e'}; see {@link PgType#enumLabels()}. */
    ENUM,
    /** {@code typtype 'd'}; see {@link PgType#base()} and {@link PgType#baseModifier()}. */
    DOMAIN,
    /** {@code typtype 'c'}: a composite type (a row type). */
    COMPOSITE,
    /** {@code typtype 'r'}. */
    RANGE,
    /** {@code typtype 'm'} (PostgreSQL 14+). */
    MULTIRANGE,
    /** {@code typtype 'p'}: a pseudo-type such as {@code record}. */
    PSEUDO,
    /** Not described: the catalog did not hold the type, or was not asked. */
    UNKNOWN;

    /**
     * Returns the kind of a {@code typtype} letter.
     *
     * @param typtype {@code pg_type.typtype}
     * @param array whether the type is an array type (then the letter is {@code b})
     * @return the kind; {@link #UNKNOWN} for a letter not listed above
     */
    public static Kind of(char typtype, boolean array) {
      if (array) {
        return ARRAY;
      }
      return switch (typtype) {
        case 'b' -> BASE;
        case 'c' -> COMPOSITE;
        case 'd' -> DOMAIN;
        case 'e' -> ENUM;
        case 'p' -> PSEUDO;
        case 'r' -> RANGE;
        case 'm' -> MULTIRANGE;
        default -> UNKNOWN;
      };
    }
  }

  /**
   * Validates the components.
   *
   * @throws NullPointerException if {@code schema}, {@code name}, {@code kind} or {@code
   *     enumLabels} is null, or an array has no element or a domain no base type
   */
  public PgType {
    Objects.requireNonNull(schema, "schema");
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(kind, "kind");
    enumLabels = List.copyOf(enumLabels);
    if (kind == Kind.ARRAY) {
      Objects.requireNonNull(element, "element of an array type");
    }
    if (kind == Kind.DOMAIN) {
      Objects.requireNonNull(base, "base type of a domain");
    }
  }

  /**
   * Returns a type that is neither an array, a domain nor an enum.
   *
   * @param oid the type oid
   * @param schema its schema
   * @param name its name
   * @param kind its kind: not {@link Kind#ARRAY}, {@link Kind#DOMAIN} or {@link Kind#ENUM}
   * @return the type
   * @throws IllegalArgumentException if {@code kind} needs more (use the canonical constructor)
   */
  public static PgType of(int oid, String schema, String name, Kind kind) {
    if (kind == Kind.ARRAY || kind == Kind.DOMAIN || kind == Kind.ENUM) {
      throw new IllegalArgumentException(
          "a type of kind " + kind + " needs its element, base or labels: use new PgType(...)");
    }
    return new PgType(oid, schema, name, kind, null, null, -1, List.of());
  }

  /**
   * Returns an array type.
   *
   * @param oid the array type's oid
   * @param schema its schema
   * @param name its name (PostgreSQL names it {@code _} and the element's name)
   * @param element the element type, not null
   * @return the type
   */
  public static PgType arrayOf(int oid, String schema, String name, PgType element) {
    return new PgType(oid, schema, name, Kind.ARRAY, element, null, -1, List.of());
  }

  /**
   * Returns a type the source could not describe.
   *
   * @param oid the type oid
   * @param schema the schema a pgoutput Type message gave, or empty
   * @param name the name a Type message gave (a domain's comes under its base type's), or empty
   * @return a type of kind {@link Kind#UNKNOWN}
   */
  public static PgType unknown(int oid, String schema, String name) {
    return new PgType(oid, schema, name, Kind.UNKNOWN, null, null, -1, List.of());
  }

  /**
   * Returns the builtin type of an oid, from datum-cdc's table of {@code pg_type.dat}: the types
   * datum-cdc decodes (Java types of {@link Row}), the builtin ranges and multiranges, and the
   * arrays of all of those; an unknown type (empty names) for any other oid. No catalog query.
   *
   * @param oid a type oid
   * @return the type, not null
   */
  public static PgType builtin(int oid) {
    PgType t = BuiltinTypes.of(oid);
    return t != null ? t : unknown(oid, "", "");
  }

  /**
   * Returns whether the type is builtin: its oid is below {@value #FIRST_NORMAL_OID}, PostgreSQL's
   * {@code FirstNormalObjectId}.
   *
   * @return true for a builtin type
   */
  public boolean isBuiltin() {
    return Integer.compareUnsigned(oid, FIRST_NORMAL_OID) < 0;
  }

  /**
   * Returns {@code schema.name}, or {@code oid N} for an unknown type without a name.
   *
   * @return the name, for messages and schema names
   */
  public String qualifiedName() {
    return name.isEmpty() ? "oid " + Integer.toUnsignedString(oid) : schema + '.' + name;
  }

  /**
   * Returns the type a value of this type is stored as: a domain's base type (through nested
   * domains), else this type.
   *
   * @return the innermost non-domain type, not null
   */
  public PgType baseType() {
    PgType t = this;
    while (t.kind == Kind.DOMAIN) {
      t = t.base;
    }
    return t;
  }

  /** Returns the qualified name and kind, for messages. */
  @Override
  public String toString() {
    return qualifiedName() + " (" + kind + ", oid " + Integer.toUnsignedString(oid) + ")";
  }
}
