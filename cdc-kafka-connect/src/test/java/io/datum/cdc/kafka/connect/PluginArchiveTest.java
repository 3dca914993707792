package io.datum.cdc.kafka.connect;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.URISyntaxException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.connect.source.SourceConnector;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * The Connect plugin the build packages (target/datum-cdc-kafka-connect-VERSION-plugin.zip and the
 * same directory unpacked): what it holds, and that the connector loads from it alone with only
 * what a worker provides (connect-api, kafka-clients, slf4j-api) beside it. Runs with the
 * integration tests (tag postgres), after the package phase built the archive.
 */
@Tag("postgres")
class PluginArchiveTest {

  private static Path pluginDirectory() throws IOException {
    try (Stream<Path> s = Files.list(Path.of("target"))) {
      Path unpacked =
          s.filter(p -> p.getFileName().toString().endsWith("-plugin") && Files.isDirectory(p))
              .findFirst()
              .orElseThrow(() -> new AssertionError("no plugin directory in target/"));
      return unpacked.resolve("datum-cdc-kafka-connect");
    }
  }

  @Test
  void theArchiveHoldsTheConnectorAndItsDependenciesButNotConnectsOwnJars() throws IOException {
    Path zip;
    try (Stream<Path> s = Files.list(Path.of("target"))) {
      zip =
          s.filter(p -> p.getFileName().toString().endsWith("-plugin.zip"))
              .findFirst()
              .orElseThrow(() -> new AssertionError("no plugin zip in target/"));
    }
    Set<String> jars = new TreeSet<>();
    try (ZipFile z = new ZipFile(zip.toFile())) {
      for (Enumeration<? extends ZipEntry> e = z.entries(); e.hasMoreElements(); ) {
        String name = e.nextElement().getName();
        if (name.endsWith(".jar")) {
          assertTrue(name.startsWith("datum-cdc-kafka-connect/lib/"), name);
          jars.add(
              name.substring(name.lastIndexOf('/') + 1)
                  .replaceAll("-[0-9][^-]*(-SNAPSHOT)?\\.jar$", ""));
        }
      }
    }
    assertEquals(
        Set.of(
            "cdc-api",
            "cdc-core",
            "cdc-kafka-connect",
            "checker-qual",
            "fastdoubleparser",
            "postgresql"),
        jars);
  }

  @Test
  void theConnectorLoadsFromThePluginDirectoryWithOnlyWhatAWorkerProvides() throws Exception {
    List<URL> urls = new ArrayList<>();
    try (Stream<Path> s = Files.list(pluginDirectory().resolve("lib"))) {
      for (Path jar : s.toList()) {
        urls.add(jar.toUri().toURL());
      }
    }
    // the parent: the JDK and the three jars a worker's classpath has, nothing of datum-cdc
    URLClassLoader worker =
        new URLClassLoader(
            new URL[] {
              jarOf(SourceConnector.class), jarOf(KafkaException.class), jarOf(LoggerFactory.class)
            },
            ClassLoader.getPlatformClassLoader());
    try (worker;
        URLClassLoader plugin = new URLClassLoader(urls.toArray(new URL[0]), worker)) {
      Class<?> connectorClass = Class.forName(DatumPostgresConnector.class.getName(), true, plugin);
      assertNotEquals(DatumPostgresConnector.class, connectorClass, "loaded from the archive");
      Object connector = connectorClass.getConstructor().newInstance();
      assertEquals(
          DatumPostgresConnector.VERSION, connectorClass.getMethod("version").invoke(connector));
      Object config = connectorClass.getMethod("config").invoke(connector);
      assertTrue(
          ((Set<?>) config.getClass().getMethod("names").invoke(config))
              .contains(DatumConnectorConfig.SLOT_NAME));
      assertEquals(ConfigDef.class.getName(), config.getClass().getName());
      // the task class and the driver resolve from the archive too
      Class.forName(DatumPostgresSourceTask.class.getName(), true, plugin);
      Class.forName("org.postgresql.Driver", true, plugin);
      // Connect's ServiceLoader discovery (plugin.discovery=service_load) finds it
      URL services =
          plugin.getResource("META-INF/services/org.apache.kafka.connect.source.SourceConnector");
      assertTrue(services != null, "the service manifest is in the connector's jar");
      try (var in = services.openStream()) {
        assertEquals(DatumPostgresConnector.class.getName(), new String(in.readAllBytes()).trim());
      }
    }
  }

  private static URL jarOf(Class<?> c) throws IOException, URISyntaxException {
    return Path.of(c.getProtectionDomain().getCodeSource().getLocation().toURI()).toUri().toURL();
  }
}
