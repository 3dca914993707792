package io.datum.cdc.samples.connect;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The one-command Kafka Connect quick start ({@code samples/kafka-connect/run}), run as the command
 * runs it: an embedded PostgreSQL, a KRaft broker and a distributed Connect worker as separate
 * processes from Kafka's jars, the connector from the plugin directory the build packaged. Tagged
 * postgres: runs in {@code verify}, after the package phase built the plugin and target/kafka/libs.
 */
@Tag("postgres")
class QuickStartTest {

  @Test
  void theConnectorFromTheBuiltPluginWritesTheRecordsOfWhatWasWritten() throws Exception {
    // the worker's class path holds Kafka's jars and nothing of datum-cdc or pgjdbc: the connector
    // can come from plugin.path only
    try (Stream<Path> jars = Files.list(QuickStart.Settings.load().kafkaLibs())) {
      List<String> names = jars.map(p -> p.getFileName().toString()).toList();
      assertTrue(names.contains("connect-runtime-4.3.1.jar"), names.toString());
      assertTrue(
          names.stream().noneMatch(n -> n.startsWith("cdc-") || n.startsWith("postgresql-")),
          names.toString());
    }
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    QuickStart run =
        new QuickStart(
            new PrintStream(out, true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8),
            false);

    List<ChangeRecord> records = run.run(false);

    String narration = err.toString(StandardCharsets.UTF_8);
    assertTrue(run.passed(), narration);
    // what was written, as the run prints it: each topic's records in the order of the changes
    List<String> customers = new ArrayList<>();
    List<String> orders = new ArrayList<>();
    for (String line : out.toString(StandardCharsets.UTF_8).split("\n")) {
      (line.startsWith(Shop.CUSTOMERS) ? customers : orders).add(line.replaceAll(" +", " "));
    }
    assertEquals(
        List.of(
            "shop.public.customers r key {\"id\":1} after {\"id\":1,\"name\":\"Ada\",\"email\":\"ada@example.com\"}",
            "shop.public.customers r key {\"id\":2} after {\"id\":2,\"name\":\"Grace\",\"email\":null}",
            "shop.public.customers c key {\"id\":3} after {\"id\":3,\"name\":\"Edsger\",\"email\":\"ewd@example.com\"}",
            "shop.public.customers u key {\"id\":2} after {\"id\":2,\"name\":\"Grace\",\"email\":\"grace@example.com\"}",
            "shop.public.customers d key {\"id\":3} before {\"id\":3,\"name\":null,\"email\":null}",
            "shop.public.customers tombstone key {\"id\":3} value null"),
        customers,
        narration);
    assertEquals(
        List.of(
            "shop.public.orders r key {\"id\":1} after {\"id\":1,\"customer_id\":1,\"item\":\"notebook\",\"quantity\":2,\"status\":\"new\"}",
            "shop.public.orders c key {\"id\":2} after {\"id\":2,\"customer_id\":3,\"item\":\"pencil\",\"quantity\":10,\"status\":\"new\"}",
            "shop.public.orders u key {\"id\":1} after {\"id\":1,\"customer_id\":1,\"item\":\"notebook\",\"quantity\":2,\"status\":\"shipped\"}",
            "shop.public.orders d key {\"id\":2} before {\"id\":2,\"customer_id\":null,\"item\":null,\"quantity\":null,\"status\":null}",
            "shop.public.orders tombstone key {\"id\":2} value null"),
        orders,
        narration);
    assertTrue(
        narration.contains("; it loaded " + QuickStart.CONNECTOR_CLASS + " from the plugin"),
        narration);
    // everything stopped and its directory deleted
    assertNotNull(run.deletedDirectory(), narration);
    assertFalse(Files.exists(run.deletedDirectory()), narration);
  }

  @Test
  void aRecordThatDiffersFromWhatWasWrittenFailsTheCheck() {
    List<ChangeRecord> records = new ArrayList<>(Shop.expectedSnapshot());
    records.addAll(Shop.expectedChanges());
    QuickStart run =
        new QuickStart(
            new PrintStream(new ByteArrayOutputStream()),
            new PrintStream(new ByteArrayOutputStream()),
            false);
    assertTrue(run.check(records));
    records.set(0, ChangeRecord.expect(Shop.CUSTOMERS, "r", "{\"id\":1}", "{\"id\":1}"));
    assertFalse(run.check(records));
    assertFalse(run.check(records.subList(1, records.size())));
  }
}
