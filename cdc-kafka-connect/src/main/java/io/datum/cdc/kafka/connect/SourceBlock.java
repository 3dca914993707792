package io.datum.cdc.kafka.connect;

import io.datum.cdc.CdcOffset;
import io.datum.cdc.PgLsn;
import io.datum.cdc.event.ChangeEvent;
import io.datum.cdc.event.MessageEvent;
import io.datum.cdc.event.SnapshotInfo;
import io.datum.cdc.event.TransactionInfo;
import java.time.Instant;
import org.apache.kafka.connect.data.Field;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.SchemaBuilder;
import org.apache.kafka.connect.data.Struct;

/**
 * The {@code source} block of every value: Debezium 3.6.1's {@code
 * io.debezium.connector.postgresql.Source} fields, in its order ({@code
 * SchemaFactory.sourceInfoSchemaBuilder}, {@code PostgresSourceInfoStructMaker}), then datum-cdc's
 * own fields that make each event's position unique ({@code commit_lsn}, {@code tx_end_lsn}, {@code
 * event_index}, {@code event_count}; {@code snapshot_id}, {@code snapshot_chunk} for snapshot
 * rows). {@code lsn} is the event's own WAL position ({@link ChangeEvent#lsn()}) and {@code
 * sequence} Debezium's {@code ["<last commit LSN>","<lsn>"]}, the first element the end LSN of the
 * transaction before ({@link TransactionInfo#previousTxEndLsn()}); rows of one multi-row WAL record
 * share an {@code lsn}, so {@code (tx_end_lsn, event_index)} is what is unique per stream event,
 * {@code (snapshot_chunk, event_index)} per snapshot row.
 */
final class SourceBlock {

  /** Debezium's {@code SnapshotRecord} values, lower case, for the {@code snapshot} Enum. */
  static final String SNAPSHOT_VALUES =
      "true,first,first_in_data_collection,last_in_data_collection,last,false,incremental";

  /** The block's schema. */
  static final Schema SCHEMA =
      SchemaBuilder.struct()
          .name("io.debezium.connector.postgresql.Source")
          .version(1)
          .field("version", Schema.STRING_SCHEMA)
          .field("connector", Schema.STRING_SCHEMA)
          .field("name", Schema.STRING_SCHEMA)
          .field("ts_ms", Schema.INT64_SCHEMA)
          .field(
              "snapshot",
              SchemaBuilder.string()
                  .name(ValueMappers.ENUM)
                  .version(1)
                  .parameter("allowed", SNAPSHOT_VALUES)
                  .defaultValue("false")
                  .optional()
                  .build())
          .field("db", Schema.STRING_SCHEMA)
          .field("sequence", Schema.OPTIONAL_STRING_SCHEMA)
          .field("ts_us", Schema.OPTIONAL_INT64_SCHEMA)
          .field("ts_ns", Schema.OPTIONAL_INT64_SCHEMA)
          .field("schema", Schema.STRING_SCHEMA)
          .field("table", Schema.STRING_SCHEMA)
          .field("txId", Schema.OPTIONAL_INT64_SCHEMA)
          .field("lsn", Schema.OPTIONAL_INT64_SCHEMA)
          .field("xmin", Schema.OPTIONAL_INT64_SCHEMA)
          .field("origin", Schema.OPTIONAL_STRING_SCHEMA)
          .field("origin_lsn", Schema.OPTIONAL_INT64_SCHEMA)
          .field("commit_lsn", Schema.OPTIONAL_INT64_SCHEMA)
          .field("tx_end_lsn", Schema.OPTIONAL_INT64_SCHEMA)
          .field("event_index", Schema.OPTIONAL_INT32_SCHEMA)
          .field("event_count", Schema.OPTIONAL_INT32_SCHEMA)
          .field("snapshot_id", Schema.OPTIONAL_STRING_SCHEMA)
          .field("snapshot_chunk", Schema.OPTIONAL_INT64_SCHEMA)
          .build();

  private static final Field VERSION = SCHEMA.field("version");
  private static final Field CONNECTOR = SCHEMA.field("connector");
  private static final Field NAME = SCHEMA.field("name");
  private static final Field TS_MS = SCHEMA.field("ts_ms");
  private static final Field SNAPSHOT = SCHEMA.field("snapshot");
  private static final Field DB = SCHEMA.field("db");
  private static final Field SEQUENCE = SCHEMA.field("sequence");
  private static final Field TS_US = SCHEMA.field("ts_us");
  private static final Field TS_NS = SCHEMA.field("ts_ns");
  private static final Field SCHEMA_NAME = SCHEMA.field("schema");
  private static final Field TABLE = SCHEMA.field("table");
  private static final Field TX_ID = SCHEMA.field("txId");
  private static final Field LSN = SCHEMA.field("lsn");
  private static final Field ORIGIN = SCHEMA.field("origin");
  private static final Field COMMIT_LSN = SCHEMA.field("commit_lsn");
  private static final Field TX_END_LSN = SCHEMA.field("tx_end_lsn");
  private static final Field EVENT_INDEX = SCHEMA.field("event_index");
  private static final Field EVENT_COUNT = SCHEMA.field("event_count");
  private static final Field SNAPSHOT_ID = SCHEMA.field("snapshot_id");
  private static final Field SNAPSHOT_CHUNK = SCHEMA.field("snapshot_chunk");

  private final RecordSettings settings;

  /**
   * @param settings the names and version to write
   */
  SourceBlock(RecordSettings settings) {
    this.settings = settings;
  }

  /**
   * Builds the block of one event.
   *
   * @param event the event
   * @param snapshot the snapshot of a read row or a snapshot's reset, else null
   * @param schema the table's schema name, empty for a message
   * @param table the table's name, empty for a message
   * @return the block
   */
  Struct struct(ChangeEvent event, SnapshotInfo snapshot, String schema, String table) {
    CdcOffset offset = event.offset();
    TransactionInfo tx = event.transaction();
    Instant at = tx.commitTime();
    long seconds = at.getEpochSecond();
    int nanos = at.getNano();
    Struct s = new Struct(SCHEMA);
    s.put(VERSION, settings.connectorVersion());
    s.put(CONNECTOR, "postgresql");
    s.put(NAME, settings.serverName());
    s.put(TS_MS, at.toEpochMilli());
    s.put(DB, settings.databaseName());
    s.put(TS_US, seconds * 1_000_000L + nanos / 1_000);
    s.put(TS_NS, seconds * 1_000_000_000L + nanos);
    s.put(SCHEMA_NAME, schema);
    s.put(TABLE, table);
    if (tx.origin() != null) {
      s.put(ORIGIN, tx.origin());
    }
    long commitLsn = tx.commitLsn().asLong();
    s.put(COMMIT_LSN, commitLsn);
    s.put(TX_END_LSN, tx.txEndLsn().asLong());
    s.put(EVENT_INDEX, offset.eventIndex());
    s.put(EVENT_COUNT, offset.eventCount());
    if (snapshot == null) {
      s.put(SNAPSHOT, "false");
      if (!(event instanceof MessageEvent m) || m.transactional()) {
        // a non-transactional message belongs to no transaction: Debezium's txId is null
        s.put(TX_ID, tx.xid());
      }
      long lsn = event.lsn().asLong();
      s.put(LSN, lsn);
      s.put(SEQUENCE, sequence(tx.previousTxEndLsn(), lsn));
    } else {
      boolean incremental = !"initial".equals(snapshot.id());
      s.put(
          SNAPSHOT,
          incremental
              ? "incremental"
              : snapshot.lastOfTable() ? "last_in_data_collection" : "true");
      if (!incremental) {
        // Debezium leaves txId, lsn and xmin out of incremental snapshot rows; an initial
        // snapshot's have no last commit
        long lsn = event.lsn().asLong();
        s.put(LSN, lsn);
        s.put(SEQUENCE, sequence(null, lsn));
      }
      s.put(SNAPSHOT_ID, snapshot.id());
      s.put(SNAPSHOT_CHUNK, snapshot.chunk());
    }
    return s;
  }

  /**
   * Debezium's {@code sequence}: a JSON array of the last commit LSN and this event's LSN, as
   * decimal strings; {@code null} (the JSON literal) where the last commit is not known.
   */
  static String sequence(PgLsn previousTxEndLsn, long lsn) {
    String first = previousTxEndLsn == null ? "null" : "\"" + previousTxEndLsn.asLong() + "\"";
    return "[" + first + ",\"" + lsn + "\"]";
  }
}
