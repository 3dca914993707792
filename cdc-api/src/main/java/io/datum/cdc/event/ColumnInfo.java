package io.datum.cdc.event;

import java.util.Objects;

/**
 * One column of a relation as the Relation message described it (PostgreSQL docs, 55.9 Logical
 * Replication Message Formats, "Relation"), with what the catalog says of its type and of the
 * column ({@code pg_type}, {@code pg_attribute.attndims}, the primary key), so that a consumer maps
 * it without asking the database again. The source describes each column once per Relation message
 * (and once per table for a snapshot), never per row; the rows of a relation share one list.
 *
 * <p>The type modifier's meaning depends on the type; {@link #length}, {@link #precision}, {@link
 * #scale} and {@link #fractionalSecondsPrecision} decode it as PostgreSQL's typmod input functions
 * encode it (src/backend/utils/adt/varchar.c {@code anychar_typmodin}, varbit.c {@code
 * anybit_typmodin}, numeric.c {@code make_numeric_typmod}, timestamp.c {@code
 * anytimestamp_typmodin} and {@code intervaltypmodin}, date.c {@code anytime_typmodin}), from the
 * column's own modifier or, for a domain column without one, the domain's ({@link
 * PgType#baseModifier}).
 *
 * @param name the column name, not null
 * @param typeOid the OID of the column's data type (a domain column has the domain's oid)
 * @param typeModifier the type modifier ({@code atttypmod}), -1 when none
 * @param key true if the column is part of the table's replica identity
 * @param type what the catalog says of the type; its oid is {@code typeOid}; not null
 * @param arrayDimensions the dimensions the column was declared with ({@code
 *     pg_attribute.attndims}: 2 for {@code int[][]}, 0 for a column that is no array); 0 when
 *     unknown. PostgreSQL does not enforce it: a value may have other dimensions
 * @param primaryKeyPosition the column's position in the table's primary key, from 1; 0 if the
 *     column is not in it (or the table has none); -1 when unknown
 */
public record ColumnInfo(
    String name,
    int typeOid,
    int typeModifier,
    boolean key,
    PgType type,
    int arrayDimensions,
    int primaryKeyPosition) {

  /** {@code VARHDRSZ}: the typmod of {@code varchar(n)} and {@code char(n)} is n + 4. */
  private static final int VARHDRSZ = 4;

  /**
   * Validates the components.
   *
   * @throws NullPointerException if {@code name} or {@code type} is null
   * @throws IllegalArgumentException if {@code type} has another oid than {@code typeOid}, or
   *     {@code arrayDimensions} is negative or {@code primaryKeyPosition} below -1
   */
  public ColumnInfo {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(type, "type");
    if (type.oid() != typeOid) {
      throw new IllegalArgumentException(
          "column "
              + name
              + ": type oid "
              + Integer.toUnsignedString(typeOid)
              + " but its type describes oid "
              + Integer.toUnsignedString(type.oid()));
    }
    if (arrayDimensions < 0 || primaryKeyPosition < -1) {
      throw new IllegalArgumentException(
          "column "
              + name
              + ": arrayDimensions must be at least 0 and primaryKeyPosition at least -1, were "
              + arrayDimensions
              + " and "
              + primaryKeyPosition);
    }
  }

  /**
   * A column as the Relation message alone describes it: a builtin type from {@link
   * PgType#builtin}, any other type {@link PgType.Kind#UNKNOWN}; dimensions and primary key
   * unknown.
   *
   * @param name the column name, not null
   * @param typeOid the type oid
   * @param typeModifier the type modifier, -1 when none
   * @param key true if the column is part of the replica identity
   * @throws NullPointerException if {@code name} is null
   */
  public ColumnInfo(String name, int typeOid, int typeModifier, boolean key) {
    this(name, typeOid, typeModifier, key, PgType.builtin(typeOid), 0, -1);
  }

  /**
   * Returns this column with what the catalog says of it.
   *
   * @param type the column type's description, of oid {@link #typeOid}
   * @param arrayDimensions {@code attndims}, 0 when unknown
   * @param primaryKeyPosition the position in the primary key from 1, 0 if none, -1 if unknown
   * @return the column
   * @throws IllegalArgumentException as the canonical constructor
   */
  public ColumnInfo describedAs(PgType type, int arrayDimensions, int primaryKeyPosition) {
    return new ColumnInfo(
        name, typeOid, typeModifier, key, type, arrayDimensions, primaryKeyPosition);
  }

  /**
   * Returns the modifier that applies to the column's values: its own, or for a domain column
   * without one the domain's (through nested domains).
   *
   * @return the modifier, -1 when none
   */
  public int effectiveTypeModifier() {
    int typmod = typeModifier;
    PgType t = type;
    while (typmod < 0 && t.kind() == PgType.Kind.DOMAIN) {
      typmod = t.baseModifier();
      t = t.base();
    }
    return typmod;
  }

  /**
   * Returns the declared length of a {@code varchar(n)}, {@code char(n)}, {@code bit(n)} or {@code
   * varbit(n)} column (or an array or domain of one).
   *
   * @return n, or -1 for another type or no declared length
   */
  public int length() {
    int typmod = effectiveTypeModifier();
    if (typmod < 0) {
      return -1;
    }
    return switch (scalarName()) {
      case "varchar", "bpchar" -> typmod - VARHDRSZ;
      case "bit", "varbit" -> typmod;
      default -> -1;
    };
  }

  /**
   * Returns the declared precision of a {@code numeric(p, s)} column (or an array or domain of
   * one): {@code ((typmod - 4) >> 16) & 0xffff}.
   *
   * @return p, or -1 for another type or an unconstrained numeric
   */
  public int precision() {
    int typmod = effectiveTypeModifier();
    if (typmod < VARHDRSZ || !"numeric".equals(scalarName())) {
      return -1;
    }
    return ((typmod - VARHDRSZ) >> 16) & 0xffff;
  }

  /**
   * Returns the declared scale of a {@code numeric(p, s)} column (or an array or domain of one):
   * the low 11 bits of {@code typmod - 4}, sign-extended (PostgreSQL 15+ allows a negative scale).
   *
   * @return s, or 0 for another type or an unconstrained numeric
   */
  public int scale() {
    int typmod = effectiveTypeModifier();
    if (typmod < VARHDRSZ || !"numeric".equals(scalarName())) {
      return 0;
    }
    return (((typmod - VARHDRSZ) & 0x7ff) ^ 1024) - 1024;
  }

  /**
   * Returns the declared fractional-second digits of a {@code time(p)}, {@code timetz(p)}, {@code
   * timestamp(p)}, {@code timestamptz(p)} or {@code interval(p)} column (or an array or domain of
   * one): the typmod itself, for an interval its low 16 bits ({@code INTERVAL_PRECISION}, 0xFFFF
   * meaning none).
   *
   * @return p (0 to 6), or -1 for another type or none declared (the values then carry up to 6)
   */
  public int fractionalSecondsPrecision() {
    int typmod = effectiveTypeModifier();
    if (typmod < 0) {
      return -1;
    }
    return switch (scalarName()) {
      case "time", "timetz", "timestamp", "timestamptz" -> typmod;
      case "interval" -> (typmod & 0xffff) == 0xffff ? -1 : typmod & 0xffff;
      default -> -1;
    };
  }

  /** The name of the builtin scalar type the modifier belongs to: through domains and arrays. */
  private String scalarName() {
    PgType t = type.baseType();
    if (t.kind() == PgType.Kind.ARRAY) {
      t = t.element().baseType();
    }
    return t.isBuiltin() ? t.name() : "";
  }
}
