package io.datum.cdc.kafka.connect;

import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.header.Headers;

/**
 * Receives the parts of one Connect record; the task turns them into a {@link
 * org.apache.kafka.connect.source.SourceRecord} with its partition and offset.
 */
interface RecordSink {

  /**
   * Takes one record's parts, in the order {@link ChangeRecords#convert} produces them.
   *
   * @param topic the topic, not null
   * @param keySchema the key's schema, or null when the record has no key
   * @param key the key, a Struct of {@code keySchema}, or null
   * @param valueSchema the value's schema, or null for a tombstone
   * @param value the value, a Struct of {@code valueSchema}, or null for a tombstone
   * @param timestampMillis the record's timestamp: the commit time of the change's transaction (the
   *     time the chunk was read, for a snapshot row), in milliseconds since the Unix epoch
   * @param headers the record's headers, or null if it has none
   */
  void accept(
      String topic,
      Schema keySchema,
      Object key,
      Schema valueSchema,
      Object value,
      long timestampMillis,
      Headers headers);
}
