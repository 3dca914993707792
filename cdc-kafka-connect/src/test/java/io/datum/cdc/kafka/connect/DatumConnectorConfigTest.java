package io.datum.cdc.kafka.connect;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.datum.cdc.core.config.SnapshotMode;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.common.config.ConfigException;
import org.junit.jupiter.api.Test;

/** The connector's options parsed, combined and refused, without a server. */
class DatumConnectorConfigTest {

  private static Map<String, String> minimal() {
    Map<String, String> m = new HashMap<>();
    m.put("database.hostname", "db.internal");
    m.put("database.user", "cdc");
    m.put("database.password", "s3cret");
    m.put("database.dbname", "shop");
    m.put("topic.prefix", "shop");
    return m;
  }

  @Test
  void defaultsAreTheDocumentedOnes() {
    DatumConnectorConfig c = new DatumConnectorConfig(minimal());
    assertEquals("datum_cdc", c.slot());
    assertEquals("datum_cdc", c.publication());
    assertEquals("jdbc:postgresql://db.internal:5432/shop", c.jdbcUrl());
    assertEquals(List.of("initial"), c.getList(DatumConnectorConfig.SNAPSHOT_MODE));
    assertEquals(10_000L, c.getLong(DatumConnectorConfig.HEARTBEAT_INTERVAL_MS));
    assertTrue(c.getBoolean(DatumConnectorConfig.TOMBSTONES_ON_DELETE));
  }

  @Test
  void driverOptionsGoToPgjdbcAndThePasswordIsNeverPrinted() {
    Map<String, String> m = minimal();
    m.put("driver.sslrootcert", "/etc/ssl/root.crt");
    m.put("driver.tcpKeepAlive", "true");
    DatumConnectorConfig c = new DatumConnectorConfig(m);
    Properties p = c.jdbcProperties("test");
    assertEquals("/etc/ssl/root.crt", p.getProperty("sslrootcert"));
    assertEquals("true", p.getProperty("tcpKeepAlive"));
    assertEquals("s3cret", p.getProperty("password"));
    assertFalse(c.toString().contains("s3cret"));
    assertFalse(String.valueOf(c.values()).contains("s3cret"));
  }

  @Test
  void anIpv6HostAndADatabaseNameWithASpaceMakeAValidUrl() {
    Map<String, String> m = minimal();
    m.put("database.hostname", "::1");
    m.put("database.dbname", "my shop");
    assertEquals("jdbc:postgresql://[::1]:5432/my%20shop", new DatumConnectorConfig(m).jdbcUrl());
  }

  @Test
  void snapshotModesCombineAsTheLibraryAllows() {
    assertEquals(
        EnumSet.of(SnapshotMode.INITIAL, SnapshotMode.ON_REQUEST),
        DatumConnectorConfig.snapshotModes(List.of("initial", " ON_REQUEST")));
    assertEquals(
        EnumSet.of(SnapshotMode.NEVER), DatumConnectorConfig.snapshotModes(List.of("no_data")));
    IllegalArgumentException both =
        assertThrows(
            IllegalArgumentException.class,
            () -> DatumConnectorConfig.snapshotModes(List.of("initial", "initial_only")));
    assertTrue(both.getMessage().contains("exclude each other"));
    assertThrows(
        IllegalArgumentException.class,
        () -> DatumConnectorConfig.snapshotModes(List.of("never", "on_request")));
  }

  @Test
  void optionsThatMustAgreeAreRefusedNamingTheOption() {
    Map<String, String> m = minimal();
    m.put("publication.autocreate.mode", "filtered");
    ConfigException e = assertThrows(ConfigException.class, () -> new DatumConnectorConfig(m));
    assertTrue(e.getMessage().startsWith("table.include.list: "), e.getMessage());
    m.put("table.include.list", "public.orders");
    new DatumConnectorConfig(m);
    m.put("reconnect.backoff.initial.ms", "60000");
    ConfigException backoff =
        assertThrows(ConfigException.class, () -> new DatumConnectorConfig(m));
    assertTrue(backoff.getMessage().contains("reconnect.backoff.initial.ms"));
  }

  @Test
  void everyRequiredOptionIsNamedWhenMissing() {
    for (String required :
        List.of("database.hostname", "database.user", "database.dbname", "topic.prefix")) {
      Map<String, String> m = minimal();
      m.remove(required);
      ConfigException e = assertThrows(ConfigException.class, () -> new DatumConnectorConfig(m));
      assertTrue(e.getMessage().contains(required), e.getMessage());
    }
  }
}
