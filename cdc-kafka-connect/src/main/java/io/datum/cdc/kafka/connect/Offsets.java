package io.datum.cdc.kafka.connect;

import io.datum.cdc.CdcCheckpoint;
import io.datum.cdc.CdcCheckpoint.PartialTransaction;
import io.datum.cdc.ClusterIdentity;
import io.datum.cdc.PgLsn;
import io.datum.cdc.SnapshotProgress;
import io.datum.cdc.spi.CheckpointCodec;
import java.util.Base64;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.connect.errors.ConnectException;

/**
 * The connector's source partition and offsets, as Kafka Connect stores them (JSON in the worker's
 * offsets topic).
 *
 * <p>The partition names the slot: {@code {"server": <topic.prefix>, "database": <dbname>, "slot":
 * <slot.name>}}. It is built from the configuration alone, so a task finds its offsets before it
 * connects; the cluster a position belongs to is in the offset, and a server of another cluster
 * fails the task ({@code CLUSTER_MISMATCH}, as the library does).
 *
 * <p>An offset is the position a task resumes from when every record up to and including the one
 * that carries it was written: the checkpoint the library would store if exactly those events were
 * acknowledged.
 *
 * <ul>
 *   <li>{@code lsn} (long): the watermark, the end LSN of the newest transaction all of whose
 *       events are written ({@code txEndLsn} of {@link io.datum.cdc.CdcOffset}; 0 if none);
 *   <li>{@code tx_end} (long), {@code tx_events} (int), {@code tx_written} (int): present when the
 *       record's transaction is not complete: its end LSN, its number of events and how many of
 *       them (from the first) are written;
 *   <li>{@code system_id} (string, unsigned 64-bit decimal), {@code timeline} (int), {@code db}
 *       (string): the cluster the positions belong to ({@code IDENTIFY_SYSTEM}); absent while the
 *       task has not streamed yet (initial snapshot rows);
 *   <li>{@code publication} (string): the publication the slot is streamed with;
 *   <li>{@code snapshot} (string): present while a snapshot ran or is in progress: the snapshot
 *       progress, base64 of datum-cdc's binary checkpoint format (docs/stores.md) holding only that
 *       progress.
 * </ul>
 *
 * <p>A position names the event inside its transaction ({@code tx_written}), not by the change's
 * own LSN: events can share an LSN (the rows of one multi-row WAL record, a {@code COPY}), and
 * Debezium's LSN-only offset skipped such events on restart (DBZ-1554).
 */
final class Offsets {

  static final String SERVER = "server";
  static final String DATABASE = "database";
  static final String SLOT = "slot";

  static final String LSN = "lsn";
  static final String TX_END = "tx_end";
  static final String TX_EVENTS = "tx_events";
  static final String TX_WRITTEN = "tx_written";
  static final String SYSTEM_ID = "system_id";
  static final String TIMELINE = "timeline";
  static final String DB = "db";
  static final String PUBLICATION = "publication";
  static final String SNAPSHOT = "snapshot";

  private Offsets() {}

  /**
   * Returns the source partition of a slot.
   *
   * @param server the topic prefix, not null
   * @param database the database name, not null
   * @param slot the slot name, not null
   * @return an unmodifiable map that iterates in the order server, database, slot. The order
   *     matters: Connect finds offsets by the serialized bytes of the partition, and its JSON
   *     follows the map's iteration order (a {@code Map.of} map iterates in an order that changes
   *     from one JVM to the next, which would lose the offsets at a worker restart)
   */
  static Map<String, String> partition(String server, String database, String slot) {
    Map<String, String> m = new LinkedHashMap<>(4);
    m.put(SERVER, server);
    m.put(DATABASE, database);
    m.put(SLOT, slot);
    return Collections.unmodifiableMap(m);
  }

  /**
   * Encodes snapshot progress for the {@code snapshot} field.
   *
   * @param slot the slot name
   * @param progress the progress, not {@link SnapshotProgress#NONE}
   * @return base64 text
   */
  static String encodeSnapshot(String slot, SnapshotProgress progress) {
    CdcCheckpoint only = CdcCheckpoint.atWatermark(slot, PgLsn.ZERO).withSnapshot(progress);
    return Base64.getEncoder().encodeToString(CheckpointCodec.encode(only));
  }

  /**
   * Builds the offset of a position.
   *
   * @param watermark the end LSN of the newest complete transaction, not null
   * @param txEnd the end LSN of the incomplete transaction, or null
   * @param txEvents its number of events (ignored when {@code txEnd} is null)
   * @param txWritten how many of its events are written, from the first, in {@code [1, txEvents)}
   * @param cluster the cluster, or null if not known yet
   * @param publication the publication, not null
   * @param snapshot the encoded snapshot progress, or null if none
   * @return a new map
   */
  static Map<String, Object> offset(
      PgLsn watermark,
      PgLsn txEnd,
      int txEvents,
      int txWritten,
      ClusterIdentity cluster,
      String publication,
      String snapshot) {
    Map<String, Object> m = new HashMap<>(16);
    m.put(LSN, watermark.asLong());
    if (txEnd != null) {
      m.put(TX_END, txEnd.asLong());
      m.put(TX_EVENTS, txEvents);
      m.put(TX_WRITTEN, txWritten);
    }
    if (cluster != null) {
      m.put(SYSTEM_ID, cluster.systemIdentifierText());
      m.put(TIMELINE, cluster.timeline());
      m.put(DB, cluster.database());
    }
    m.put(PUBLICATION, publication);
    if (snapshot != null) {
      m.put(SNAPSHOT, snapshot);
    }
    return m;
  }

  /**
   * Reads an offset back into the checkpoint a task resumes from.
   *
   * @param slot the slot the partition names
   * @param offset the stored offset (JSON-decoded: numbers may be Integer or Long), not null
   * @param where names the partition, for messages
   * @return the checkpoint
   * @throws ConnectException if a field is missing, of the wrong type or out of range; the message
   *     names the field, its value and the partition
   */
  static CdcCheckpoint checkpoint(String slot, Map<String, ?> offset, String where) {
    PgLsn watermark = PgLsn.of(longField(offset, LSN, true, where));
    List<PartialTransaction> partial = List.of();
    if (offset.get(TX_END) != null) {
      PgLsn txEnd = PgLsn.of(longField(offset, TX_END, true, where));
      int events = (int) longField(offset, TX_EVENTS, true, where);
      int written = (int) longField(offset, TX_WRITTEN, true, where);
      if (events < 2 || written < 1 || written >= events) {
        throw bad(where, TX_WRITTEN, written + " of " + events + " events", null);
      }
      partial = List.of(PartialTransaction.ofRanges(txEnd, events, new int[] {0, written}));
    }
    ClusterIdentity cluster = null;
    Object systemId = offset.get(SYSTEM_ID);
    if (systemId != null) {
      try {
        cluster =
            new ClusterIdentity(
                Long.parseUnsignedLong(String.valueOf(systemId)),
                (int) longField(offset, TIMELINE, true, where),
                stringField(offset, DB, where));
      } catch (IllegalArgumentException e) {
        throw bad(where, SYSTEM_ID, systemId, e);
      }
    }
    Object publication = offset.get(PUBLICATION);
    SnapshotProgress snapshot = SnapshotProgress.NONE;
    Object encoded = offset.get(SNAPSHOT);
    if (encoded != null) {
      try {
        byte[] bytes = Base64.getDecoder().decode(String.valueOf(encoded));
        snapshot = CheckpointCodec.decode(bytes, slot, where).snapshot();
      } catch (RuntimeException e) {
        throw bad(where, SNAPSHOT, encoded, e);
      }
    }
    try {
      return new CdcCheckpoint(
          slot,
          watermark,
          partial,
          List.of(),
          cluster,
          publication == null ? null : String.valueOf(publication),
          snapshot);
    } catch (IllegalArgumentException e) {
      throw new ConnectException("the offset " + offset + " of " + where + " is invalid: " + e, e);
    }
  }

  private static long longField(Map<String, ?> offset, String name, boolean required, String w) {
    Object v = offset.get(name);
    if (v == null) {
      if (required) {
        throw bad(w, name, null, null);
      }
      return 0;
    }
    if (v instanceof Number n) {
      return n.longValue();
    }
    try {
      return Long.parseLong(String.valueOf(v));
    } catch (NumberFormatException e) {
      throw bad(w, name, v, e);
    }
  }

  private static String stringField(Map<String, ?> offset, String name, String where) {
    Object v = offset.get(name);
    if (v == null) {
      throw bad(where, name, null, null);
    }
    return String.valueOf(v);
  }

  private static ConnectException bad(String where, String field, Object value, Exception cause) {
    return new ConnectException(
        "the offset stored for "
            + where
            + " has "
            + (value == null ? "no " + field : field + " = " + value + ", which is invalid")
            + "; it was not written by this connector, or was altered by hand (the Connect REST"
            + " API's PATCH /connectors/<name>/offsets). Fix or reset the offsets (resetting"
            + " does not rewind the replication slot: see docs/kafka-connect.md)",
        cause);
  }
}
