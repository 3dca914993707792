package io.datum.cdc.benchmarks.e2e;

import io.debezium.engine.DebeziumEngine;
import java.util.Properties;

/**
 * What every Debezium Engine consumer of the harnesses shares: the PostgreSQL connector on
 * pgoutput, an existing slot and publication (never created, never dropped), offsets in memory
 * flushed at once, and a completion callback that ends the child JVM on a failure.
 */
public final class DebeziumEngines {

  private DebeziumEngines() {}

  /**
   * The connector's common properties; the caller adds the snapshot mode, the tables and its own.
   *
   * @param name the engine's name
   * @param topicPrefix the topics' prefix ({@code <prefix>.public.<table>})
   * @param args host, port, database, user, password, slot, publication: the first seven command
   *     line arguments of every Debezium consumer (an empty password as {@code -})
   * @return the properties
   */
  public static Properties postgres(String name, String topicPrefix, String[] args) {
    Properties props = new Properties();
    props.setProperty("name", name);
    props.setProperty("connector.class", "io.debezium.connector.postgresql.PostgresConnector");
    props.setProperty(
        "offset.storage", "org.apache.kafka.connect.storage.MemoryOffsetBackingStore");
    props.setProperty("offset.flush.interval.ms", "0");
    props.setProperty("database.hostname", args[0]);
    props.setProperty("database.port", args[1]);
    props.setProperty("database.dbname", args[2]);
    props.setProperty("database.user", args[3]);
    props.setProperty("database.password", args[4].equals("-") ? "" : args[4]);
    props.setProperty("topic.prefix", topicPrefix);
    props.setProperty("plugin.name", "pgoutput");
    props.setProperty("slot.name", args[5]);
    props.setProperty("publication.name", args[6]);
    props.setProperty("publication.autocreate.mode", "disabled");
    props.setProperty("slot.drop.on.stop", "false");
    return props;
  }

  /**
   * A completion callback that prints the engine's failure and exits with status 1 (the harness
   * then reports no result for the consumer).
   *
   * @return the callback
   */
  public static DebeziumEngine.CompletionCallback exitOnFailure() {
    return (success, message, error) -> {
      if (!success) {
        System.err.println("Debezium engine failed: " + message);
        if (error != null) {
          error.printStackTrace();
        }
        System.exit(1);
      }
    };
  }
}
