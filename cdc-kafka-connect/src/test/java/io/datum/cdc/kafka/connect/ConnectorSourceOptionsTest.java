package io.datum.cdc.kafka.connect;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.datum.cdc.core.config.SourceOption;
import io.datum.cdc.core.config.SourceOptions;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigException;
import org.junit.jupiter.api.Test;

/**
 * The connector's keys of the source options against their declarations: every option has a key or
 * a reason not to, the keys are Debezium's names as the connector has always had them, and a key's
 * type, doc and default are the option's (or the connector's documented own default).
 */
class ConnectorSourceOptionsTest {

  /** The keys and the defaults the connector had before they were derived; a change is a break. */
  private static final Map<String, Object> KEYS_AND_DEFAULTS = expected();

  private static Map<String, Object> expected() {
    Map<String, Object> m = new TreeMap<>();
    m.put("slot.name", "datum_cdc");
    m.put("slot.create", true);
    m.put("slot.failover", false);
    m.put("slot.wait.ms", 60_000L);
    m.put("slot.creation.timeout.ms", 0L);
    m.put("slot.trust.position", false);
    m.put("allow.cluster.change", false);
    m.put("allow.publication.change", false);
    m.put("publication.name", "datum_cdc");
    m.put("pgoutput.protocol.version", 0);
    m.put("pgoutput.streaming", "off");
    m.put("pgoutput.two.phase", false);
    m.put("pgoutput.binary", false);
    // unset: not sent, so a task starts on PostgreSQL 14 and 15 too (the option needs 16)
    m.put("pgoutput.origin", null);
    m.put("messages.enabled", false);
    m.put("memory.budget.bytes", 64L << 20);
    m.put("spill.directory", System.getProperty("java.io.tmpdir"));
    m.put("decode.error.policy", "raw");
    m.put("status.update.interval.ms", 1000L);
    m.put("reconnect.max.attempts", -1);
    m.put("reconnect.backoff.initial.ms", 200L);
    m.put("reconnect.backoff.max.ms", 30_000L);
    m.put("snapshot.mode", List.of("initial"));
    m.put("snapshot.max.threads", 1);
    m.put("snapshot.chunk.rows", 8192);
    return m;
  }

  @Test
  void everyOptionHasAKeyOrAReasonNotTo() {
    List<String> problems = new ArrayList<>();
    for (SourceOption<?> o : SourceOptions.all()) {
      long keys = ConnectorSourceOptions.KEYS.stream().filter(k -> k.option() == o).count();
      boolean reason = ConnectorSourceOptions.NOT_OFFERED.containsKey(o);
      if ((keys == 1) == reason || keys > 1) {
        problems.add(o + ": " + keys + " key(s)" + (reason ? " and a reason not to offer it" : ""));
      }
    }
    assertEquals(List.of(), problems, "update ConnectorSourceOptions.KEYS or NOT_OFFERED");
  }

  @Test
  void theKeysAndDefaultsAreTheConnectorsOwn() {
    Map<String, ConfigDef.ConfigKey> def = DatumConnectorConfig.CONFIG_DEF.configKeys();
    Map<String, Object> actual = new TreeMap<>();
    for (String name : KEYS_AND_DEFAULTS.keySet()) {
      ConfigDef.ConfigKey key = def.get(name);
      actual.put(name, key == null ? null : ConfigDef.parseType(name, key.defaultValue, key.type));
    }
    assertEquals(KEYS_AND_DEFAULTS, actual);
  }

  @Test
  void aKeysTypeDocAndDefaultAreTheOptions() {
    Map<String, ConfigDef.ConfigKey> def = DatumConnectorConfig.CONFIG_DEF.configKeys();
    List<String> problems = new ArrayList<>();
    for (ConnectorSourceOptions.Key k : ConnectorSourceOptions.KEYS) {
      ConfigDef.ConfigKey key = def.get(k.key());
      if (key.type != ConnectorSourceOptions.type(k)) {
        problems.add(k.key() + ": type " + key.type);
      }
      if (!key.documentation.startsWith(k.option().description())) {
        problems.add(k.key() + ": doc is not the option's description");
      }
      Object value =
          ConnectorSourceOptions.toSource(
              k, ConfigDef.parseType(k.key(), key.defaultValue, key.type));
      if (k.connectorDefault() == null
          && !String.valueOf(value).equals(String.valueOf(k.option().defaultValue()))) {
        problems.add(
            k.key() + ": default " + value + ", the option's " + k.option().defaultValue());
      }
    }
    assertEquals(List.of(), problems);
  }

  @Test
  void aValueTheDeclarationRefusesIsRefusedNamingTheKey() {
    Map<String, String> m = new HashMap<>();
    m.put("database.hostname", "db");
    m.put("database.user", "cdc");
    m.put("database.dbname", "shop");
    m.put("topic.prefix", "shop");
    m.put("slot.name", "Not-A-Slot");
    ConfigException e = assertThrows(ConfigException.class, () -> new DatumConnectorConfig(m));
    assertTrue(e.getMessage().contains("slot.name"), e.getMessage());
    m.put("slot.name", "ok_slot");
    m.put("pgoutput.streaming", "sometimes");
    e = assertThrows(ConfigException.class, () -> new DatumConnectorConfig(m));
    assertTrue(e.getMessage().contains("pgoutput.streaming"), e.getMessage());
    m.put("pgoutput.streaming", "PARALLEL");
    new DatumConnectorConfig(m);
  }
}
