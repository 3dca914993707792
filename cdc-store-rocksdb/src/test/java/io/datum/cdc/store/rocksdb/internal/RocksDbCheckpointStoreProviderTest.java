package io.datum.cdc.store.rocksdb.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.datum.cdc.CdcCheckpoint;
import io.datum.cdc.CdcCheckpointStore;
import io.datum.cdc.CdcConfigurationException;
import io.datum.cdc.CheckpointStores;
import io.datum.cdc.PgLsn;
import io.datum.cdc.store.rocksdb.RocksDbCheckpointStore;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class RocksDbCheckpointStoreProviderTest {

  @TempDir Path dir;

  @Test
  void serviceLoaderFindsTheRocksdbScheme() {
    RocksDbCheckpointStoreProvider provider =
        assertInstanceOf(
            RocksDbCheckpointStoreProvider.class,
            CheckpointStores.providers(getClass().getClassLoader()).get("rocksdb"));
    assertTrue(provider.description().startsWith("rocksdb:/dir"), provider.description());
    try (CdcCheckpointStore store = CheckpointStores.open("rocksdb:" + dir)) {
      RocksDbCheckpointStore rocks = assertInstanceOf(RocksDbCheckpointStore.class, store);
      assertTrue(rocks.options().syncWrites());
      store.store(CdcCheckpoint.atWatermark("s", PgLsn.of(42)));
      assertEquals("rocksdb:" + dir + "?sync=true", store.location());
    }
    assertTrue(Files.isRegularFile(dir.resolve("CURRENT")));
  }

  @Test
  void locationReopensTheSameDatabaseWithTheSameOptions() {
    String location;
    try (CdcCheckpointStore store = CheckpointStores.open("rocksdb:" + dir + "?sync=false")) {
      store.store(CdcCheckpoint.atWatermark("s", PgLsn.of(42)));
      location = store.location();
    }
    try (CdcCheckpointStore store = CheckpointStores.open(location)) {
      assertFalse(((RocksDbCheckpointStore) store).options().syncWrites());
      assertEquals(PgLsn.of(42), store.load("s").orElseThrow().watermark());
    }
  }

  @Test
  void acceptsAbsoluteFormsAndTheSyncParameter() {
    assertTarget("/var/lib/app/cdc-rocks", true, "rocksdb:/var/lib/app/cdc-rocks");
    assertTarget("/var/lib/app/cdc-rocks", true, "rocksdb:///var/lib/app/cdc-rocks/");
    assertTarget("/var/lib/a b", true, "rocksdb:/var/lib/a%20b");
    assertTarget("/x", true, "ROCKSDB:/x");
    assertTarget("/x", true, "rocksdb:/x?sync=true");
    assertTarget("/x", false, "rocksdb:/x?sync=false");
    assertTarget("/x", false, "rocksdb:/x?sync=FALSE");
    assertTarget("/x", true, "rocksdb:/x?");
  }

  @Test
  void relativeFormIsRelativeToTheWorkingDirectory() {
    assertTarget("rel/dir", true, "rocksdb:rel/dir");
    assertTarget("rel/dir", false, "rocksdb:rel/dir?sync=false");
    Path relative = Path.of("").toAbsolutePath().relativize(dir.resolve("rel"));
    try (CdcCheckpointStore store = CheckpointStores.open("rocksdb:" + relative)) {
      store.store(CdcCheckpoint.atWatermark("s", PgLsn.of(1)));
    }
    assertTrue(Files.isRegularFile(dir.resolve("rel/CURRENT")));
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "rocksdb:/tmp/cdc?fsync=false", "rocksdb:/tmp/cdc?sync=maybe", "rocksdb:/tmp/cdc?sync=",
        "rocksdb:/tmp/cdc?sync", "rocksdb:/tmp/cdc?sync=true&sync=false",
            "rocksdb:/tmp/cdc?sync=true&",
        "rocksdb:/tmp/cdc?&sync=true", "rocksdb:rel?x=1", "rocksdb:rel?sync=yes"
      })
  void rejectsUnknownOrMalformedParametersListingTheKnownOnes(String text) {
    CdcConfigurationException e =
        assertThrows(
            CdcConfigurationException.class,
            () -> new RocksDbCheckpointStoreProvider().open(URI.create(text)));
    assertTrue(e.getMessage().contains('"' + text + '"'), e.getMessage());
    assertTrue(e.getMessage().contains("known parameters: sync=true|false"), e.getMessage());
    // nothing was created
    assertFalse(Files.exists(Path.of("/tmp/cdc")) && Files.exists(Path.of("/tmp/cdc/CURRENT")));
  }

  @Test
  void unknownParameterIsNamed() {
    CdcConfigurationException e =
        assertThrows(
            CdcConfigurationException.class,
            () -> CheckpointStores.open("rocksdb:" + dir + "?sink=false"));
    assertTrue(e.getMessage().contains("unknown parameter \"sink\""), e.getMessage());
    assertFalse(Files.exists(dir.resolve("CURRENT")));
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "rocksdb:/tmp/cdc#frag",
        "rocksdb:rel#x",
        "rocksdb://host/tmp/cdc",
        "rocksdb:/",
        "rocksdb:///"
      })
  void rejectsUrisNotNamingADirectory(String text) {
    CdcConfigurationException e =
        assertThrows(
            CdcConfigurationException.class,
            () -> new RocksDbCheckpointStoreProvider().open(URI.create(text)));
    assertTrue(e.getMessage().contains('"' + text + '"'), e.getMessage());
  }

  @Test
  void bareSchemeNamesNoDirectory() {
    CdcConfigurationException e =
        assertThrows(CdcConfigurationException.class, () -> CheckpointStores.open("rocksdb:"));
    assertTrue(e.getMessage().contains("names no directory"), e.getMessage());
  }

  private static void assertTarget(String directory, boolean sync, String uri) {
    RocksDbCheckpointStoreProvider.Target target =
        RocksDbCheckpointStoreProvider.parse(URI.create(uri));
    assertEquals(Path.of(directory), target.directory(), uri);
    assertEquals(sync, target.options().syncWrites(), uri);
  }
}
