package io.datum.cdc.kafka.connect;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.common.config.Config;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigValue;
import org.apache.kafka.connect.connector.Task;
import org.apache.kafka.connect.errors.ConnectException;
import org.apache.kafka.connect.source.ConnectorTransactionBoundaries;
import org.apache.kafka.connect.source.ExactlyOnceSupport;
import org.apache.kafka.connect.source.SourceConnector;

/**
 * datum-cdc's PostgreSQL source connector for Kafka Connect: one task streams one logical
 * replication slot (pgoutput) into one topic per table, with Debezium-compatible change events
 * (docs/kafka-connect.md).
 *
 * <p>It runs one task whatever {@code tasks.max} says: a slot has one reader (PostgreSQL allows one
 * walsender per slot), and Connect is the distributed engine that restarts the task on another
 * worker. It supports exactly-once delivery (KIP-618: {@code exactly.once.source.support=enabled}
 * on the workers) and connector-defined transaction boundaries (one Kafka transaction per
 * PostgreSQL transaction).
 */
public final class DatumPostgresConnector extends SourceConnector {

  /** The connector's version: datum-cdc's. */
  public static final String VERSION = readVersion();

  private Map<String, String> props;

  /** Creates the connector; Connect calls {@link #start}. */
  public DatumPostgresConnector() {}

  private static String readVersion() {
    try (InputStream in =
        DatumPostgresConnector.class.getResourceAsStream("connector-version.properties")) {
      if (in == null) {
        return "unknown";
      }
      Properties p = new Properties();
      p.load(in);
      return p.getProperty("version", "unknown");
    } catch (IOException e) {
      throw new UncheckedIOException("reading connector-version.properties", e);
    }
  }

  @Override
  public String version() {
    return VERSION;
  }

  @Override
  public void start(Map<String, String> props) {
    new DatumConnectorConfig(props); // fails on an invalid configuration
    this.props = Map.copyOf(props);
  }

  @Override
  public Class<? extends Task> taskClass() {
    return DatumPostgresSourceTask.class;
  }

  /**
   * Returns one task configuration: a slot has a single reader.
   *
   * @param maxTasks Connect's {@code tasks.max}; any value at least 1 gives one task
   */
  @Override
  public List<Map<String, String>> taskConfigs(int maxTasks) {
    return List.of(props);
  }

  @Override
  public void stop() {}

  @Override
  public ConfigDef config() {
    return DatumConnectorConfig.CONFIG_DEF;
  }

  /**
   * Validates each option (a message per field), then the options that must agree, then, when the
   * connection options are valid, connects to PostgreSQL and reports an unreachable server on
   * {@code database.hostname} and a refused login on {@code database.user}/{@code
   * database.password}.
   */
  @Override
  public Config validate(Map<String, String> connectorConfigs) {
    Config result = super.validate(connectorConfigs);
    Map<String, ConfigValue> byName = new HashMap<>();
    for (ConfigValue v : result.configValues()) {
      byName.put(v.name(), v);
    }
    boolean fieldsValid = result.configValues().stream().allMatch(v -> v.errorMessages().isEmpty());
    if (!fieldsValid) {
      return result;
    }
    DatumConnectorConfig parsed;
    try {
      parsed = new DatumConnectorConfig(connectorConfigs);
    } catch (org.apache.kafka.common.config.ConfigException e) {
      for (String problem : e.getMessage().split("; ")) {
        int colon = problem.indexOf(": ");
        ConfigValue v = colon > 0 ? byName.get(problem.substring(0, colon)) : null;
        (v != null ? v : byName.get(DatumConnectorConfig.TOPIC_PREFIX))
            .addErrorMessage(colon > 0 ? problem.substring(colon + 2) : problem);
      }
      return result;
    }
    checkConnection(parsed, byName);
    return result;
  }

  private static void checkConnection(DatumConnectorConfig c, Map<String, ConfigValue> byName) {
    Properties p = c.jdbcProperties("datum-cdc validate");
    p.putIfAbsent("connectTimeout", "10");
    try (Connection conn = DriverManager.getConnection(c.jdbcUrl(), p)) {
      conn.isValid(5);
    } catch (SQLException e) {
      String state = e.getSQLState() == null ? "" : e.getSQLState();
      String message =
          "cannot connect to "
              + c.jdbcUrl()
              + " as "
              + c.getString(DatumConnectorConfig.USER)
              + ": "
              + e.getMessage()
              + (state.isEmpty() ? "" : " (SQLSTATE " + state + ")");
      if (state.startsWith("28")) {
        byName.get(DatumConnectorConfig.USER).addErrorMessage(message);
        byName.get(DatumConnectorConfig.PASSWORD).addErrorMessage(message);
      } else if (state.equals("3D000")) {
        byName.get(DatumConnectorConfig.DBNAME).addErrorMessage(message);
      } else {
        byName.get(DatumConnectorConfig.HOSTNAME).addErrorMessage(message);
      }
    }
  }

  /** Exactly-once delivery is supported in every configuration (KIP-618). */
  @Override
  public ExactlyOnceSupport exactlyOnceSupport(Map<String, String> connectorConfig) {
    return ExactlyOnceSupport.SUPPORTED;
  }

  /**
   * Connector-defined transaction boundaries are supported: one Kafka transaction per PostgreSQL
   * transaction (or per snapshot chunk).
   */
  @Override
  public ConnectorTransactionBoundaries canDefineTransactionBoundaries(
      Map<String, String> connectorConfig) {
    return ConnectorTransactionBoundaries.SUPPORTED;
  }

  /**
   * Checks offsets given over Connect's REST API (KIP-875) before they are written: each must be
   * one this connector could have written for the slot the configuration names. A reset (null) is
   * accepted, but it does not rewind the replication slot: the task then starts as a new connector
   * would (a new slot if the old one was dropped; with the slot still there, the library fails the
   * start because the slot is ahead of the offsets, unless {@code slot.trust.position}) — see
   * docs/kafka-connect.md.
   *
   * @throws ConnectException naming the partition or offset that is not valid
   */
  @Override
  public boolean alterOffsets(
      Map<String, String> connectorConfig, Map<Map<String, ?>, Map<String, ?>> offsets) {
    DatumConnectorConfig c = new DatumConnectorConfig(connectorConfig);
    Map<String, String> own = Offsets.partition(c.topicPrefix(), c.database(), c.slot());
    for (Map.Entry<Map<String, ?>, Map<String, ?>> e : offsets.entrySet()) {
      if (!own.equals(e.getKey())) {
        throw new ConnectException(
            "the source partition "
                + e.getKey()
                + " is not this connector's; its only partition is "
                + own);
      }
      if (e.getValue() != null) {
        Offsets.checkpoint(c.slot(), e.getValue(), "the altered offset of partition " + own);
      }
    }
    return true;
  }
}
