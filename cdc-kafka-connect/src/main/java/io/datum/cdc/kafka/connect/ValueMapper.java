package io.datum.cdc.kafka.connect;

import org.apache.kafka.connect.data.Schema;

/**
 * How the values of one column type become Connect values: the field's (optional) schema, the
 * conversion of a decoded, non-null value, and the value an unchanged TOASTed column gets. Built
 * once per column of a column list ({@link ValueMappers}), used for every row.
 *
 * @param schema the field's schema, optional, not null
 * @param converter converts a decoded value, not null
 * @param unchangedToast the value of an unchanged TOASTed column (Debezium's placeholder in the
 *     field's representation), or null when the representation has none (the field is then null)
 * @param typeName the PostgreSQL type as this mapping understood it, for error messages
 */
record ValueMapper(Schema schema, Converter converter, Object unchangedToast, String typeName) {

  /** Converts one decoded value of a column type to its Connect value. */
  @FunctionalInterface
  interface Converter {
    /**
     * Converts a value.
     *
     * @param value the library's decoded value, of the Java type docs/pgoutput.md gives for the
     *     type, not null
     * @return the Connect value of the field's schema, or an {@link Unrepresentable} when the value
     *     has no representation in the schema
     * @throws ClassCastException if the value is not of the Java type the type decodes to
     */
    Object convert(Object value);
  }

  /**
   * A value the field's schema cannot hold (a {@code numeric} NaN in precise mode, a timestamp
   * beyond INT64 microseconds, an array of other dimensions than the schema's): the field gets
   * {@code substitute} and the record a header with {@code text}.
   *
   * @param substitute the field's value instead (null, or an array with the unrepresentable
   *     elements null)
   * @param text the value as text, for the header, not null
   */
  record Unrepresentable(Object substitute, String text) {}
}
