package io.datum.cdc.kafka.connect;

import java.util.List;
import java.util.Objects;

/**
 * Describes the types that are not PostgreSQL builtins (oids from {@code FirstNormalObjectId},
 * 16384, on: enums, domains, arrays of them, composites, ranges, extension types), which the schema
 * of a column needs. {@link ChangeRecords} asks only when it first meets a column list, never per
 * row, and never for a builtin oid. {@link PgTypeLookup} asks {@code pg_type}.
 */
interface TypeLookup {

  /** A lookup that knows no type: every non-builtin column becomes a STRING of its text. */
  TypeLookup NONE = oid -> null;

  /**
   * Returns what the catalog says of one type.
   *
   * @param oid a type oid of at least 16384 (unsigned, as {@code int})
   * @return the type, or null if the catalog does not hold it (dropped before it was asked)
   * @throws org.apache.kafka.connect.errors.ConnectException if the catalog cannot be asked
   */
  UserType type(int oid);

  /**
   * Returns a table's primary key, for tables whose every column pgoutput flags as replica identity
   * (REPLICA IDENTITY FULL): their key is then the primary key, as Debezium's is, rather than every
   * column. Asked once per new column list of such a table.
   *
   * @param table the table
   * @return the primary key's column names in key order, empty if the table has none, or null if
   *     unknown (this default)
   * @throws org.apache.kafka.connect.errors.ConnectException if the catalog cannot be asked
   */
  default java.util.List<String> primaryKey(io.datum.cdc.event.TableId table) {
    return null;
  }

  /**
   * Returns the declared dimensions of a table's array columns that have more than one ({@code
   * pg_attribute.attndims}: {@code int[][]} has 2), so that their schema nests as deep. Asked once
   * per new column list of a table with array columns.
   *
   * @param table the table
   * @return column name to dimensions, for columns of more than one; empty if none or unknown (this
   *     default: every array is one-dimensional)
   * @throws org.apache.kafka.connect.errors.ConnectException if the catalog cannot be asked
   */
  default java.util.Map<String, Integer> arrayDimensions(io.datum.cdc.event.TableId table) {
    return java.util.Map.of();
  }

  /**
   * One row of {@code pg_type} as far as the Connect schema needs it (PostgreSQL docs, 53.64
   * pg_type; 53.20 pg_enum).
   *
   * @param oid the type oid
   * @param schema the type's schema ({@code typnamespace}), not null
   * @param name the type's name ({@code typname}), not null
   * @param kind {@code typtype}: {@code b} base, {@code c} composite, {@code d} domain, {@code e}
   *     enum, {@code p} pseudo, {@code r} range, {@code m} multirange
   * @param baseType a domain's {@code typbasetype}, else 0
   * @param baseTypeModifier a domain's {@code typtypmod} (the modifier of its base type, e.g. a
   *     domain over {@code numeric(10,2)}), else -1
   * @param elementType the element type of an array type ({@code typelem} when {@code typsubscript}
   *     is {@code array_subscript_handler}), else 0
   * @param enumLabels an enum's labels in {@code enumsortorder}, else empty; not null
   */
  record UserType(
      int oid,
      String schema,
      String name,
      char kind,
      int baseType,
      int baseTypeModifier,
      int elementType,
      List<String> enumLabels) {

    /**
     * @throws NullPointerException if {@code schema}, {@code name} or {@code enumLabels} is null
     */
    public UserType {
      Objects.requireNonNull(schema, "schema");
      Objects.requireNonNull(name, "name");
      enumLabels = List.copyOf(enumLabels);
    }

    /** Returns true for an array type. */
    boolean isArray() {
      return elementType != 0;
    }
  }
}
