package io.datum.cdc.kafka.connect;

import io.datum.cdc.TableId;
import io.datum.cdc.event.ColumnInfo;
import java.util.List;
import org.apache.kafka.connect.data.Field;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.SchemaBuilder;

/**
 * The Connect schemas of one table for one column list: the value ({@code
 * <prefix>.<schema>.<table>.Value}, optional, every field optional), the key ({@code ...Key}: the
 * replica-identity columns, the primary key's for REPLICA IDENTITY FULL; null when there are none)
 * and Debezium's envelope ({@code ...Envelope}: {@code before}, {@code after}, {@code source},
 * {@code transaction}, {@code op}, {@code ts_ms}, {@code ts_us}, {@code ts_ns}, in the order of
 * Debezium's {@code TableSchemaBuilder} and {@code SchemaFactory.datatypeEnvelopeSchema}), with the
 * per-column mappers and the fields resolved once, so that a row converts in a loop. Immutable.
 */
final class TableSchema {

  /** Debezium's transaction block ({@code SchemaFactory.transactionBlockSchema}). */
  static final Schema TRANSACTION_BLOCK =
      SchemaBuilder.struct()
          .optional()
          .name("event.block")
          .version(1)
          .field("id", Schema.STRING_SCHEMA)
          .field("total_order", Schema.INT64_SCHEMA)
          .field("data_collection_order", Schema.INT64_SCHEMA)
          .build();

  /** Debezium's {@code Envelope.SCHEMA_VERSION}. */
  static final int ENVELOPE_VERSION = 2;

  final TableId table;
  final String topic;
  final List<ColumnInfo> columns;
  final Schema value;
  final Schema key;
  final Schema envelope;
  final ValueMapper[] mappers;
  final Field[] fields;

  /** For each key field, the value field it copies. */
  final Field[] keyFromValue;

  final Field[] keyFields;
  final Field before;
  final Field after;
  final Field source;
  final Field transaction;
  final Field op;
  final Field tsMs;
  final Field tsUs;
  final Field tsNs;

  /**
   * Builds the schemas.
   *
   * @param table the table
   * @param topic the table's topic, also the prefix of the schema names
   * @param columns the column list, not empty unless the table's columns are unknown (a truncate
   *     before any row)
   * @param mappers one per column
   * @param key the key schema, or null when no column is a key column
   */
  TableSchema(
      TableId table, String topic, List<ColumnInfo> columns, ValueMapper[] mappers, Schema key) {
    this.table = table;
    this.topic = topic;
    this.columns = columns;
    this.mappers = mappers;
    // no version, as Debezium's Key and Value schemas: a schema registry tells them apart by
    // content
    SchemaBuilder builder = SchemaBuilder.struct().name(topic + ".Value").optional();
    for (int i = 0; i < columns.size(); i++) {
      builder.field(columns.get(i).name(), mappers[i].schema());
    }
    this.value = builder.build();
    this.key = key;
    this.fields = value.fields().toArray(new Field[0]);
    if (key != null) {
      this.keyFields = key.fields().toArray(new Field[0]);
      this.keyFromValue = new Field[keyFields.length];
      for (int k = 0; k < keyFields.length; k++) {
        keyFromValue[k] = value.field(keyFields[k].name());
      }
    } else {
      this.keyFields = new Field[0];
      this.keyFromValue = new Field[0];
    }
    this.envelope =
        SchemaBuilder.struct()
            .name(topic + ".Envelope")
            .version(ENVELOPE_VERSION)
            .field("before", value)
            .field("after", value)
            .field("source", SourceBlock.SCHEMA)
            .field("transaction", TRANSACTION_BLOCK)
            .field("op", Schema.STRING_SCHEMA)
            .field("ts_ms", Schema.OPTIONAL_INT64_SCHEMA)
            .field("ts_us", Schema.OPTIONAL_INT64_SCHEMA)
            .field("ts_ns", Schema.OPTIONAL_INT64_SCHEMA)
            .build();
    this.before = envelope.field("before");
    this.after = envelope.field("after");
    this.source = envelope.field("source");
    this.transaction = envelope.field("transaction");
    this.op = envelope.field("op");
    this.tsMs = envelope.field("ts_ms");
    this.tsUs = envelope.field("ts_us");
    this.tsNs = envelope.field("ts_ns");
  }
}
