package io.datum.cdc.benchmarks.connect;

import io.datum.cdc.embedded.EmbeddedPostgresServer;
import io.datum.cdc.kafka.connect.DatumPostgresConnector;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * A connector configuration measured: which connector, and whether it writes exactly once. Both
 * connectors get the same batch and queue sizes (Debezium's defaults, which datum-cdc's mirror),
 * the same poll interval, pgoutput, an existing slot and publication, no snapshot.
 */
public enum Setup {
  /** datum-cdc's connector on a worker without exactly-once support. */
  DATUM("datum", false),
  /**
   * datum-cdc's connector with {@code exactly.once.support=required} and {@code
   * transaction.boundary=connector} (one Kafka transaction per PostgreSQL transaction).
   */
  DATUM_EOS("datum_eos", true),
  /**
   * datum-cdc's connector with {@code exactly.once.support=required} and {@code
   * transaction.boundary=poll}: one Kafka transaction per batch, as Debezium's; a PostgreSQL
   * transaction may then span two Kafka transactions.
   */
  DATUM_EOS_POLL("datum_eos_poll", true),
  /** Debezium's PostgreSQL connector on a worker without exactly-once support. */
  DEBEZIUM("debezium", false),
  /**
   * Debezium's PostgreSQL connector with {@code exactly.once.support=required} and {@code
   * transaction.boundary=poll} (one Kafka transaction per batch the task returns).
   */
  DEBEZIUM_EOS("debezium_eos", true);

  /** The name on the command line and in the results. */
  public final String label;

  /** Whether the worker runs with {@code exactly.once.source.support=enabled}. */
  public final boolean exactlyOnce;

  Setup(String label, boolean exactlyOnce) {
    this.label = label;
    this.exactlyOnce = exactlyOnce;
  }

  /** Records per batch a task returns from {@code poll()}, for both connectors. */
  static final String MAX_BATCH_SIZE = "2048";

  /** Records a task buffers between its source and {@code poll()}, for both connectors. */
  static final String MAX_QUEUE_SIZE = "8192";

  /** How long {@code poll()} waits for a record when the queue is empty, for both connectors. */
  static final String POLL_INTERVAL_MS = "500";

  /** Returns the setup of a label. */
  static Setup of(String label) {
    for (Setup s : values()) {
      if (s.label.equals(label.trim().toLowerCase(Locale.ROOT))) {
        return s;
      }
    }
    throw new IllegalArgumentException(
        "unknown connector setup " + label + "; one of " + List.of(values()));
  }

  /** Whether this is datum-cdc's connector. */
  boolean datum() {
    return this == DATUM || this == DATUM_EOS || this == DATUM_EOS_POLL;
  }

  /**
   * Returns the connector's configuration.
   *
   * @param pg the server
   * @param name the connector's name and topic prefix
   * @param slot the existing slot
   * @param publication the existing publication
   * @param table the published table (schema public)
   */
  Map<String, String> config(
      EmbeddedPostgresServer pg, String name, String slot, String publication, String table) {
    Map<String, String> c = new HashMap<>();
    c.put("name", name);
    c.put("tasks.max", "1");
    c.put("database.hostname", EmbeddedPostgresServer.HOST);
    c.put("database.port", Integer.toString(pg.port()));
    c.put("database.user", pg.user());
    c.put("database.password", pg.password());
    c.put("database.dbname", EmbeddedPostgresServer.DEFAULT_DATABASE);
    c.put("topic.prefix", name);
    c.put("slot.name", slot);
    c.put("publication.name", publication);
    c.put("publication.autocreate.mode", "disabled");
    c.put("max.batch.size", MAX_BATCH_SIZE);
    c.put("max.queue.size", MAX_QUEUE_SIZE);
    c.put("poll.interval.ms", POLL_INTERVAL_MS);
    if (datum()) {
      c.put("connector.class", DatumPostgresConnector.class.getName());
      c.put("snapshot.mode", "never");
      c.put("slot.create", "false");
      if (exactlyOnce) {
        c.put("exactly.once.support", "required");
        c.put("transaction.boundary", this == DATUM_EOS ? "connector" : "poll");
      }
    } else {
      c.put("connector.class", "io.debezium.connector.postgresql.PostgresConnector");
      c.put("plugin.name", "pgoutput");
      c.put("snapshot.mode", "no_data");
      c.put("table.include.list", "public." + table);
      c.put("slot.drop.on.stop", "false");
      if (exactlyOnce) {
        c.put("exactly.once.support", "required");
        c.put("transaction.boundary", "poll");
      }
    }
    return c;
  }

  @Override
  public String toString() {
    return label;
  }
}
