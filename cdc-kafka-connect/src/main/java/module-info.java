/**
 * A Kafka Connect source connector over datum-cdc ({@link
 * io.datum.cdc.kafka.connect.DatumPostgresConnector}): Debezium-compatible change records, the
 * position in Connect's offsets. Kafka's jars have no module descriptors: {@code connect.api} and
 * {@code kafka.clients} are their automatic module names, and a Connect worker loads the plugin
 * from its class path or plugin path, where this descriptor is not read.
 */
module io.datum.cdc.kafka.connect {
  requires io.datum.cdc.core;
  requires connect.api;
  requires kafka.clients;
  requires org.slf4j;
  requires java.sql;

  exports io.datum.cdc.kafka.connect;

  provides org.apache.kafka.connect.source.SourceConnector with
      io.datum.cdc.kafka.connect.DatumPostgresConnector;
}
