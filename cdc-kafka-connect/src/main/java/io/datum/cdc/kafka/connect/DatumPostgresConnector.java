package io.datum.cdc.kafka.connect;

import io.datum.cdc.CdcConfigurationException;
import io.datum.cdc.TableId;
import io.datum.cdc.core.errors.PgErrors;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
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
 * on the workers) and connector-defined transaction boundaries (Kafka transactions of whole
 * PostgreSQL transactions).
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
    for (String key : connectorConfigs.keySet()) {
      if (isUnknownOption(key)) {
        ConfigValue unknown = new ConfigValue(key);
        unknown.addErrorMessage(
            "not an option of this connector (a Debezium option without an equivalent, or a"
                + " misspelling): remove it; docs/kafka-connect.md lists the options");
        result.configValues().add(unknown);
      }
    }
    Map<String, ConfigValue> byName = new HashMap<>();
    for (ConfigValue v : result.configValues()) {
      byName.put(v.name(), v);
    }
    for (ConfigValue v : result.configValues()) {
      // ConfigDef runs the validator on the null a failed parse leaves: one error is enough
      if (v.errorMessages().size() > 1) {
        v.errorMessages().removeIf(m -> m.contains("must be non-null"));
      }
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

  /**
   * Prefixes of this connector's own options: a key under one that it does not define is a typo or
   * a Debezium option with no equivalent here (such as {@code table.exclude.list}), which silently
   * ignored would publish what the user meant to leave out. Prefixes Connect itself uses ({@code
   * topic.creation.}, {@code transaction.boundary}) are not among them.
   */
  private static final List<String> OWN_PREFIXES =
      List.of(
          "database.",
          "slot.",
          "publication.",
          "table.",
          "column.",
          "schema.",
          "snapshot.",
          "pgoutput.",
          "messages.",
          "memory.",
          "spill.",
          "decode.",
          "status.",
          "reconnect.",
          "tombstones.",
          "decimal.",
          "interval.",
          "time.",
          "unavailable.",
          "heartbeat.",
          "max.",
          "poll.",
          "allow.");

  static boolean isUnknownOption(String key) {
    if (DatumConnectorConfig.CONFIG_DEF.names().contains(key) || key.startsWith("driver.")) {
      return false;
    }
    for (String prefix : OWN_PREFIXES) {
      if (key.startsWith(prefix)) {
        return true;
      }
    }
    return false;
  }

  private static void checkConnection(DatumConnectorConfig c, Map<String, ConfigValue> byName) {
    Properties p = c.jdbcProperties("datum-cdc validate");
    p.putIfAbsent("connectTimeout", "10");
    try (Connection conn = DriverManager.getConnection(c.jdbcUrl(), p)) {
      checkServer(conn, c, byName);
    } catch (SQLException e) {
      String state = e.getSQLState() == null ? "" : e.getSQLState();
      String message =
          "cannot connect to "
              + c.jdbcUrl()
              + " as "
              + c.getString(DatumConnectorConfig.USER)
              + ": "
              + withCauses(e)
              + (state.isEmpty() ? "" : " (SQLSTATE " + state + ")");
      if (PgErrors.isAuthenticationFailure(e)) {
        // class 28, or pgjdbc's 08004 when the server asks for a password and none was given
        byName.get(DatumConnectorConfig.USER).addErrorMessage(message);
        byName.get(DatumConnectorConfig.PASSWORD).addErrorMessage(message);
      } else if (state.equals("42501")) {
        // insufficient_privilege, such as CONNECT on the database
        byName.get(DatumConnectorConfig.USER).addErrorMessage(message);
      } else if (state.equals("3D000")) {
        byName.get(DatumConnectorConfig.DBNAME).addErrorMessage(message);
      } else {
        byName.get(DatumConnectorConfig.HOSTNAME).addErrorMessage(message);
      }
    }
  }

  /**
   * What a task's start would refuse, checked while the user is still at the configuration: {@code
   * wal_level}, the role's right to replicate, the publication (when it must exist or be created
   * for named tables), and a spill directory that cannot be written.
   */
  private static void checkServer(
      Connection conn, DatumConnectorConfig c, Map<String, ConfigValue> byName)
      throws SQLException {
    String user = c.getString(DatumConnectorConfig.USER);
    try (Statement st = conn.createStatement();
        ResultSet rs = st.executeQuery("SHOW wal_level")) {
      // PostgreSQL docs, "Logical Replication / Configuration Settings": wal_level = logical
      if (rs.next() && !"logical".equals(rs.getString(1))) {
        byName
            .get(DatumConnectorConfig.HOSTNAME)
            .addErrorMessage(
                "the server's wal_level is "
                    + rs.getString(1)
                    + "; logical decoding needs wal_level = logical (postgresql.conf or ALTER"
                    + " SYSTEM SET wal_level = logical, then a server restart)");
      }
    }
    // PostgreSQL docs, "Logical Replication / Security": a walsender connection needs the
    // REPLICATION attribute or superuser; Amazon RDS grants it through the rds_replication role.
    try (PreparedStatement ps =
        conn.prepareStatement(
            "SELECT r.rolsuper OR r.rolreplication OR COALESCE((SELECT pg_has_role(r.oid, g.oid,"
                + " 'MEMBER') FROM pg_roles g WHERE g.rolname = 'rds_replication'), false)"
                + " FROM pg_roles r WHERE r.rolname = current_user")) {
      try (ResultSet rs = ps.executeQuery()) {
        if (rs.next() && !rs.getBoolean(1)) {
          byName
              .get(DatumConnectorConfig.USER)
              .addErrorMessage(
                  "role "
                      + user
                      + " may not replicate: it has neither the REPLICATION attribute nor"
                      + " superuser (ALTER ROLE "
                      + user
                      + " WITH REPLICATION; on Amazon RDS: GRANT rds_replication TO "
                      + user
                      + ")");
        }
      }
    }
    String publication = c.publication();
    boolean exists;
    try (PreparedStatement ps =
        conn.prepareStatement("SELECT 1 FROM pg_publication WHERE pubname = ?")) {
      ps.setString(1, publication);
      try (ResultSet rs = ps.executeQuery()) {
        exists = rs.next();
      }
    }
    String mode = c.getString(DatumConnectorConfig.PUBLICATION_AUTOCREATE_MODE);
    if (!exists && mode.equalsIgnoreCase("disabled")) {
      byName
          .get(DatumConnectorConfig.PUBLICATION_NAME)
          .addErrorMessage(
              "publication "
                  + publication
                  + " does not exist in database "
                  + c.database()
                  + " and publication.autocreate.mode=disabled: create it (CREATE PUBLICATION "
                  + publication
                  + " FOR TABLE ...) or set publication.autocreate.mode");
    }
    if (!exists && mode.equalsIgnoreCase("filtered")) {
      List<String> missing = new ArrayList<>();
      try (PreparedStatement ps =
          conn.prepareStatement(
              "SELECT 1 FROM pg_class t JOIN pg_namespace n ON n.oid = t.relnamespace"
                  + " WHERE n.nspname = ? AND t.relname = ? AND t.relkind IN ('r', 'p')")) {
        for (String table : c.getList(DatumConnectorConfig.TABLE_INCLUDE_LIST)) {
          TableId id;
          try {
            id = TableId.parse(table);
          } catch (CdcConfigurationException e) {
            byName.get(DatumConnectorConfig.TABLE_INCLUDE_LIST).addErrorMessage(e.getMessage());
            continue;
          }
          ps.setString(1, id.schema());
          ps.setString(2, id.table());
          try (ResultSet rs = ps.executeQuery()) {
            if (!rs.next()) {
              missing.add(table);
            }
          }
        }
      }
      if (!missing.isEmpty()) {
        byName
            .get(DatumConnectorConfig.TABLE_INCLUDE_LIST)
            .addErrorMessage(
                "no such table in database "
                    + c.database()
                    + ": "
                    + String.join(", ", missing)
                    + " (names are schema.table or table for schema public, case-sensitive;"
                    + " double-quote a part as in SQL)");
      }
    }
    String spill = c.getString(DatumConnectorConfig.SPILL_DIRECTORY);
    if (spill != null && !spill.isBlank()) {
      Path dir = Path.of(spill);
      if (Files.exists(dir) && (!Files.isDirectory(dir) || !Files.isWritable(dir))) {
        byName
            .get(DatumConnectorConfig.SPILL_DIRECTORY)
            .addErrorMessage(dir.toAbsolutePath() + " is not a writable directory on this worker");
      }
    }
  }

  /** The message of an exception and of each cause (pgjdbc hides "unknown host" in a cause). */
  static String withCauses(Throwable e) {
    StringBuilder b = new StringBuilder(String.valueOf(e.getMessage()));
    for (Throwable t = e.getCause(); t != null && t != t.getCause(); t = t.getCause()) {
      String m = t.getMessage();
      if (m != null && !b.toString().contains(m)) {
        b.append(": ")
            .append(t instanceof java.net.UnknownHostException ? "unknown host " : "")
            .append(m);
      }
    }
    return b.toString();
  }

  /** Exactly-once delivery is supported in every configuration (KIP-618). */
  @Override
  public ExactlyOnceSupport exactlyOnceSupport(Map<String, String> connectorConfig) {
    return ExactlyOnceSupport.SUPPORTED;
  }

  /**
   * Connector-defined transaction boundaries are supported: each Kafka transaction holds whole
   * PostgreSQL transactions (those of one poll's batch) or snapshot chunks.
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
