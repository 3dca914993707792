package io.datum.cdc.kafka.connect;

import io.datum.cdc.TableId;
import io.datum.cdc.event.ChangeEvent;
import io.datum.cdc.event.ColumnInfo;
import io.datum.cdc.event.DeleteEvent;
import io.datum.cdc.event.InsertEvent;
import io.datum.cdc.event.MessageEvent;
import io.datum.cdc.event.ReadEvent;
import io.datum.cdc.event.Row;
import io.datum.cdc.event.RowChange;
import io.datum.cdc.event.TransactionInfo;
import io.datum.cdc.event.TruncateEvent;
import io.datum.cdc.event.UpdateEvent;
import io.datum.cdc.kafka.connect.TableSchemas.Layout;
import io.datum.cdc.kafka.connect.ValueMapper.Unrepresentable;
import java.time.Clock;
import java.time.Instant;
import java.util.Objects;
import java.util.UUID;
import org.apache.kafka.connect.data.Field;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.SchemaBuilder;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.errors.DataException;
import org.apache.kafka.connect.header.ConnectHeaders;
import org.apache.kafka.connect.header.Header;

/**
 * Turns library events into the parts of Connect records in Debezium's PostgreSQL format
 * (docs/kafka-connect-types.md): row changes to {@code <prefix>.<schema>.<table>} with a key Struct
 * of the replica-identity columns (the primary key's for REPLICA IDENTITY FULL) and Debezium's
 * change event envelope; a delete's tombstone; truncates as {@code op = t}, one per table; logical
 * decoding messages as Debezium's {@code op = m} records. Not thread-safe: one instance per task
 * thread, fed the events in the order they were delivered.
 *
 * <p>Values that a field cannot hold are never put in a wrong type: the field is null (or holds
 * Debezium's placeholder) and the record carries a header that says why ({@value
 * #UNCHANGED_TOAST_HEADER}, {@value #UNDECODED_HEADER}, {@value #UNREPRESENTABLE_HEADER}, each
 * followed by {@code .before.<column>} or {@code .after.<column>}).
 */
final class ChangeRecords {

  /** Header prefix of a column whose unchanged TOASTed value PostgreSQL did not send. */
  static final String UNCHANGED_TOAST_HEADER = "datum.unchanged_toast";

  /** Header prefix of a column the library could not decode; the header holds the raw value. */
  static final String UNDECODED_HEADER = "datum.undecoded";

  /** Header prefix of a value its field's schema cannot represent; the header holds its text. */
  static final String UNREPRESENTABLE_HEADER = "datum.unrepresentable";

  /** Prefix of Debezium's context headers ({@code CommonConnectorConfig}'s context headers). */
  static final String CONTEXT_HEADER = "__debezium.context.";

  /** Header of the delete record of a key change: the new key (Debezium's). */
  static final String NEW_KEY_HEADER = "__debezium.newkey";

  /** Header of the create record of a key change: the old key (Debezium's). */
  static final String OLD_KEY_HEADER = "__debezium.oldkey";

  /** The data collection of logical decoding messages in the transaction block (Debezium's). */
  private static final String MESSAGE_COLLECTION = "LOGICAL_DECODING_MESSAGE";

  private static final Schema MESSAGE_KEY =
      SchemaBuilder.struct()
          .name("io.debezium.connector.postgresql.MessageKey")
          .version(1)
          .field("prefix", Schema.OPTIONAL_STRING_SCHEMA)
          .build();

  private static final Schema MESSAGE_BLOCK =
      SchemaBuilder.struct()
          .name("io.debezium.connector.postgresql.Message")
          .version(1)
          .field("prefix", Schema.OPTIONAL_STRING_SCHEMA)
          .field("content", Schema.OPTIONAL_BYTES_SCHEMA)
          .build();

  private static final Schema MESSAGE_VALUE =
      SchemaBuilder.struct()
          .name("io.debezium.connector.postgresql.MessageValue")
          .version(1)
          .field("op", Schema.STRING_SCHEMA)
          .field("ts_ms", Schema.OPTIONAL_INT64_SCHEMA)
          .field("source", SourceBlock.SCHEMA)
          .field("transaction", TableSchema.TRANSACTION_BLOCK)
          .field("message", MESSAGE_BLOCK)
          .build();

  private final RecordSettings settings;
  private final TableSchemas schemas;
  private final SourceBlock source;
  private final TransactionOrder order = new TransactionOrder();
  private final Clock clock;

  /** The headers of the record being built; null until one is needed. */
  private ConnectHeaders headers;

  /** Debezium's context headers, the same on every data record of this converter. */
  private final Header[] context;

  /**
   * @param settings names and representations
   * @throws NullPointerException if an argument is null
   */
  ChangeRecords(RecordSettings settings) {
    this(settings, Clock.systemUTC());
  }

  /**
   * @param settings names and representations
   * @param clock gives the envelope's {@code ts_ms} (the time the record was made, as Debezium's)
   * @throws NullPointerException if an argument is null
   */
  ChangeRecords(RecordSettings settings, Clock clock) {
    this.settings = Objects.requireNonNull(settings, "settings");
    this.schemas = new TableSchemas(settings.topicPrefix(), new ValueMappers(settings));
    this.source = new SourceBlock(settings);
    this.clock = Objects.requireNonNull(clock, "clock");
    this.context =
        new Header[] {
          contextHeader("connectorLogicalName", settings.topicPrefix()),
          contextHeader("taskId", "0"),
          contextHeader("connectorName", "postgresql"),
          contextHeader("runId", UUID.randomUUID().toString())
        };
  }

  /** Returns an immutable header, to be added to every record. */
  private static Header contextHeader(String name, String value) {
    return new ConnectHeaders()
        .addString(CONTEXT_HEADER + name, value)
        .lastWithName(CONTEXT_HEADER + name);
  }

  /**
   * Appends the records of one event to sink, in order; returns how many (insert/update/read: 1;
   * delete: 1, or 2 with the tombstone; an update that changed the key: a delete, its tombstone and
   * a create, 3, or 2 without tombstones; truncate: one per table, on each table's topic; message:
   * 1 or 0 when messages are off).
   *
   * @param event the event, not null
   * @param sink receives the records' parts
   * @return the number of records given to the sink
   * @throws DataException if a value's Java type contradicts its column's type (a bug: the message
   *     names the table, column, type oid and the value's class)
   * @throws org.apache.kafka.connect.errors.ConnectException if a type lookup fails
   */
  int convert(ChangeEvent event, RecordSink sink) {
    if (event instanceof RowChange row) {
      return row(row, sink);
    }
    if (event instanceof TruncateEvent truncate) {
      return truncate(truncate, sink);
    }
    return message((MessageEvent) event, sink);
  }

  /**
   * Converts a row change: one envelope record, and a tombstone after a delete when configured.
   *
   * @return 1, or 2 with a tombstone
   */
  private int row(RowChange event, RecordSink sink) {
    Row before;
    Row after;
    String op;
    ReadEvent read = null;
    if (event instanceof InsertEvent e) {
      before = null;
      after = e.after();
      op = "c";
    } else if (event instanceof UpdateEvent e) {
      before = e.before();
      after = e.after();
      op = "u";
    } else if (event instanceof DeleteEvent e) {
      before = e.before();
      after = null;
      op = "d";
    } else {
      read = (ReadEvent) event;
      before = null;
      after = read.after();
      op = "r";
    }
    TableId table = event.table();
    headers = null;
    Layout afterLayout = after == null ? null : schemas.full(table, after.columns());
    Layout beforeLayout =
        before == null
            ? null
            : schemas.old(
                table, before.columns(), afterLayout == null ? null : afterLayout.target());
    TableSchema schema =
        afterLayout != null
            ? afterLayout.target()
            : beforeLayout != null
                ? beforeLayout.target()
                : schemas.forTruncate(table); // a delete without old row: no key either
    Struct beforeStruct = before == null ? null : struct(table, before, beforeLayout, "before");
    ConnectHeaders beforeHeaders = headers;
    headers = null;
    Struct afterStruct = after == null ? null : struct(table, after, afterLayout, "after");
    ConnectHeaders afterHeaders = headers;
    headers = null;
    TransactionInfo tx = event.transaction();
    long millis = tx.commitTime().toEpochMilli();
    Struct key = key(schema, afterStruct != null ? afterStruct : beforeStruct);
    Schema keySchema = key == null ? null : schema.key;
    if (beforeStruct != null && afterStruct != null && key != null) {
      Struct oldKey = key(schema, beforeStruct);
      if (!oldKey.equals(key)) {
        return keyChange(
            event,
            schema,
            beforeStruct,
            beforeHeaders,
            afterStruct,
            afterHeaders,
            oldKey,
            key,
            sink);
      }
    }
    Struct envelope =
        envelope(event, schema, read, beforeStruct, afterStruct, op, tx, schema.topic);
    sink.accept(
        schema.topic,
        keySchema,
        key,
        schema.envelope,
        envelope,
        millis,
        withContext(merge(beforeHeaders, afterHeaders)));
    if (after == null && settings.tombstonesOnDelete()) {
      sink.accept(schema.topic, keySchema, key, null, null, millis, withContext(null));
      return 2;
    }
    return 1;
  }

  /**
   * Converts an update that changed the row's key as Debezium does ({@code
   * RelationalChangeRecordEmitter.emitUpdateAsPrimaryKeyChangeRecord}): a delete of the old key
   * (with header {@value #NEW_KEY_HEADER}, the new key) and its tombstone, then a create of the new
   * key (with header {@value #OLD_KEY_HEADER}, the old key), so that a compacted topic keeps no row
   * under the old key.
   *
   * @return 3, or 2 without tombstones
   */
  private int keyChange(
      RowChange event,
      TableSchema schema,
      Struct before,
      ConnectHeaders beforeHeaders,
      Struct after,
      ConnectHeaders afterHeaders,
      Struct oldKey,
      Struct newKey,
      RecordSink sink) {
    TransactionInfo tx = event.transaction();
    long millis = tx.commitTime().toEpochMilli();
    ConnectHeaders deleteHeaders = withContext(beforeHeaders);
    deleteHeaders.add(NEW_KEY_HEADER, newKey, schema.key);
    Struct delete = envelope(event, schema, null, before, null, "d", tx, schema.topic);
    sink.accept(schema.topic, schema.key, oldKey, schema.envelope, delete, millis, deleteHeaders);
    int records = 1;
    if (settings.tombstonesOnDelete()) {
      ConnectHeaders tombstoneHeaders = withContext(null);
      tombstoneHeaders.add(NEW_KEY_HEADER, newKey, schema.key);
      sink.accept(schema.topic, schema.key, oldKey, null, null, millis, tombstoneHeaders);
      records++;
    }
    ConnectHeaders createHeaders = withContext(afterHeaders);
    createHeaders.add(OLD_KEY_HEADER, oldKey, schema.key);
    Struct create = envelope(event, schema, null, null, after, "c", tx, schema.topic);
    sink.accept(schema.topic, schema.key, newKey, schema.envelope, create, millis, createHeaders);
    return records + 1;
  }

  /** Builds the envelope of one record of a row change. */
  private Struct envelope(
      RowChange event,
      TableSchema schema,
      ReadEvent read,
      Struct before,
      Struct after,
      String op,
      TransactionInfo tx,
      String collection) {
    Struct envelope = new Struct(schema.envelope);
    if (before != null) {
      envelope.put(schema.before, before);
    }
    if (after != null) {
      envelope.put(schema.after, after);
    }
    TableId table = event.table();
    envelope.put(
        schema.source,
        source.struct(event, read == null ? null : read.snapshot(), table.schema(), table.table()));
    if (read == null) {
      Struct block = order.block(event.offset(), tx, collection);
      if (block != null) {
        envelope.put(schema.transaction, block);
      }
    }
    envelope.put(schema.op, op);
    timestamps(envelope, schema);
    return envelope;
  }

  /** Returns the headers of both row images in one set, or null if neither has any. */
  private static ConnectHeaders merge(ConnectHeaders first, ConnectHeaders second) {
    if (first == null) {
      return second;
    }
    if (second != null) {
      second.forEach(first::add);
    }
    return first;
  }

  /**
   * Adds Debezium's context headers ({@code __debezium.context.*}: the logical name, the task, the
   * connector, the run), which Debezium 3.6.1 puts on every record of a table, tombstones too.
   *
   * @param headers the record's other headers, or null
   * @return headers with the context ones, never null
   */
  private ConnectHeaders withContext(ConnectHeaders headers) {
    ConnectHeaders h = headers == null ? new ConnectHeaders() : headers;
    for (Header c : context) {
      h.add(c);
    }
    return h;
  }

  /**
   * Converts a truncate: one {@code op = t} record per table, without key. A snapshot's reset of a
   * table without a key is one such record, its {@code source} a snapshot row's (the rows read
   * after it follow as {@code op = r}), without a transaction block.
   *
   * @return the number of tables
   */
  private int truncate(TruncateEvent event, RecordSink sink) {
    TransactionInfo tx = event.transaction();
    long millis = tx.commitTime().toEpochMilli();
    for (TableId table : event.tables()) {
      TableSchema schema = schemas.forTruncate(table);
      Struct envelope = new Struct(schema.envelope);
      envelope.put(
          schema.source, source.struct(event, event.snapshot(), table.schema(), table.table()));
      if (!event.isSnapshotReset()) {
        Struct block = order.block(event.offset(), tx, schema.topic);
        if (block != null) {
          envelope.put(schema.transaction, block);
        }
      }
      envelope.put(schema.op, "t");
      timestamps(envelope, schema);
      sink.accept(schema.topic, null, null, schema.envelope, envelope, millis, withContext(null));
    }
    return event.tables().size();
  }

  /**
   * Converts a logical decoding message to Debezium's {@code MessageValue} record.
   *
   * @return 1, or 0 when messages are off
   */
  private int message(MessageEvent event, RecordSink sink) {
    if (settings.messagesTopic() == null) {
      return 0;
    }
    TransactionInfo tx = event.transaction();
    Struct key = new Struct(MESSAGE_KEY).put("prefix", event.prefix());
    Struct value = new Struct(MESSAGE_VALUE);
    value.put("op", "m");
    value.put("ts_ms", clock.millis());
    value.put("source", source.struct(event, null, "", ""));
    if (event.transactional()) {
      Struct block = order.block(event.offset(), tx, MESSAGE_COLLECTION);
      if (block != null) {
        value.put("transaction", block);
      }
    }
    value.put(
        "message",
        new Struct(MESSAGE_BLOCK).put("prefix", event.prefix()).put("content", event.content()));
    sink.accept(
        settings.messagesTopic(),
        MESSAGE_KEY,
        key,
        MESSAGE_VALUE,
        value,
        tx.commitTime().toEpochMilli(),
        null);
    return 1;
  }

  /** Puts the envelope's {@code ts_ms}, {@code ts_us}, {@code ts_ns}: now, by the clock. */
  private void timestamps(Struct envelope, TableSchema schema) {
    Instant now = clock.instant();
    long seconds = now.getEpochSecond();
    int nanos = now.getNano();
    envelope.put(schema.tsMs, now.toEpochMilli());
    envelope.put(schema.tsUs, seconds * 1_000_000L + nanos / 1_000);
    envelope.put(schema.tsNs, seconds * 1_000_000_000L + nanos);
  }

  /**
   * Builds the key from the key fields of a converted row.
   *
   * @param row the converted row, or null (a delete without old row)
   * @return the key, or null if the table has no key or there is no row
   */
  private static Struct key(TableSchema schema, Struct row) {
    if (schema.key == null || row == null) {
      return null;
    }
    Struct key = new Struct(schema.key);
    Field[] from = schema.keyFromValue;
    Field[] to = schema.keyFields;
    for (int k = 0; k < to.length; k++) {
      Object v = row.get(from[k]);
      if (v != null) {
        key.put(to[k], v);
      }
    }
    return key;
  }

  /**
   * Converts one row image to its value Struct, adding headers for unchanged TOAST, undecoded and
   * unrepresentable values.
   *
   * @param image {@code before} or {@code after}, for header names
   * @throws DataException if a value's class contradicts its column's type
   */
  private Struct struct(TableId table, Row row, Layout layout, String image) {
    TableSchema schema = layout.target();
    int[] fieldOf = layout.fieldOf();
    Struct struct = new Struct(schema.value);
    boolean undecoded = row.hasUndecoded();
    for (int i = 0; i < fieldOf.length; i++) {
      int f = fieldOf[i];
      ValueMapper mapper = schema.mappers[f];
      if (row.isUnchangedToast(i)) {
        Object placeholder = mapper.unchangedToast();
        if (placeholder != null) {
          struct.put(schema.fields[f], placeholder);
        }
        headers()
            .addString(
                name(UNCHANGED_TOAST_HEADER, image, row.column(i)),
                placeholder == null ? "null" : "placeholder");
        continue;
      }
      Object value = row.get(i);
      if (value == null) {
        continue;
      }
      if (undecoded && row.isUndecoded(i)) {
        String key = name(UNDECODED_HEADER, image, row.column(i));
        if (value instanceof byte[] bytes) {
          headers().addBytes(key, bytes);
        } else {
          headers().addString(key, (String) value);
        }
        continue;
      }
      Object converted;
      try {
        converted = mapper.converter().convert(value);
      } catch (ClassCastException | ArithmeticException e) {
        throw invalid(table, row.column(i), mapper, value, e);
      }
      if (converted instanceof Unrepresentable u) {
        headers().addString(name(UNREPRESENTABLE_HEADER, image, row.column(i)), u.text());
        converted = u.substitute();
        if (converted == null) {
          continue;
        }
      }
      struct.put(schema.fields[f], converted);
    }
    return struct;
  }

  /** Returns the current record's headers, creating them on first use. */
  private ConnectHeaders headers() {
    if (headers == null) {
      headers = new ConnectHeaders();
    }
    return headers;
  }

  /** Returns a header name, {@code <kind>.<image>.<column>}. */
  private static String name(String kind, String image, ColumnInfo column) {
    return kind + '.' + image + '.' + column.name();
  }

  /** The error for a value whose class contradicts its column's type. */
  private static DataException invalid(
      TableId table, ColumnInfo column, ValueMapper mapper, Object value, RuntimeException e) {
    return new DataException(
        "cannot convert column \""
            + column.name()
            + "\" of table "
            + table
            + " (type oid "
            + Integer.toUnsignedString(column.typeOid())
            + ", typmod "
            + column.typeModifier()
            + ", mapped as "
            + mapper.typeName()
            + "): the library gave a value of class "
            + value.getClass().getName()
            + ", which that type never decodes to ("
            + e.getMessage()
            + ")",
        e);
  }
}
