package io.datum.cdc.kafka.connect;

import io.datum.cdc.CdcCheckpointHandle;
import io.datum.cdc.CdcOffset;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.header.Headers;
import org.apache.kafka.connect.source.SourceRecord;

/**
 * A record of the task, which remembers the event it belongs to: {@code commitRecord} hands the
 * task the record it polled (before transforms), and the event is acknowledged to the library once
 * every record of it was written. Most events make one record; a delete with its tombstone and a
 * truncate of several tables make more, which share one countdown.
 */
final class DatumRecord extends SourceRecord {

  /** The event's position, or null for a record of no event (a heartbeat). */
  private final CdcOffset event;

  /** Shared by the records of one event when it has more than one; null otherwise. */
  private final AtomicInteger remaining;

  /** Whether a Kafka transaction may end after this record (the last of its transaction). */
  private final boolean endsTransaction;

  /** Set once Connect called commitRecord for it; read by the offset-commit thread. */
  private volatile boolean acknowledged;

  DatumRecord(
      Map<String, ?> partition,
      Map<String, ?> offset,
      String topic,
      Schema keySchema,
      Object key,
      Schema valueSchema,
      Object value,
      long timestamp,
      Headers headers,
      CdcOffset event,
      AtomicInteger remaining,
      boolean endsTransaction) {
    super(
        partition,
        offset,
        topic,
        null,
        keySchema,
        key,
        valueSchema,
        value,
        timestamp,
        headers == null ? null : headers);
    this.event = event;
    this.remaining = remaining;
    this.endsTransaction = endsTransaction;
  }

  /** Returns the event's position, or null for a record of no event (a heartbeat). */
  CdcOffset event() {
    return event;
  }

  /**
   * Returns this record with another source offset: the same event, countdown and transaction
   * boundary. Only for a record not yet polled (Connect knows none of its copies).
   *
   * @param offset the source offset, not null
   */
  DatumRecord withOffset(Map<String, ?> offset) {
    return new DatumRecord(
        sourcePartition(),
        offset,
        topic(),
        keySchema(),
        key(),
        valueSchema(),
        value(),
        timestamp(),
        headers(),
        event,
        remaining,
        endsTransaction);
  }

  /** Returns whether Connect acknowledged the record ({@link #written} was called). */
  boolean acknowledged() {
    return acknowledged;
  }

  /** Returns whether a Kafka transaction may be committed after this record. */
  boolean endsTransaction() {
    return endsTransaction;
  }

  /**
   * Called when Kafka acknowledged the record (or a transform dropped it): acknowledges its event
   * once all its records were.
   *
   * @param handle the library's handle
   */
  void written(CdcCheckpointHandle handle) {
    acknowledged = true;
    if (event == null) {
      return;
    }
    if (remaining == null || remaining.decrementAndGet() == 0) {
      handle.acknowledge(event);
    }
  }
}
