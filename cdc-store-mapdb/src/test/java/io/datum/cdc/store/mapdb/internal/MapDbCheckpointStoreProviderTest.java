package io.datum.cdc.store.mapdb.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.datum.cdc.CdcCheckpoint;
import io.datum.cdc.CdcCheckpointStore;
import io.datum.cdc.CdcConfigurationException;
import io.datum.cdc.CheckpointStores;
import io.datum.cdc.PgLsn;
import io.datum.cdc.store.mapdb.MapDbCheckpointStore;
import io.datum.cdc.store.mapdb.MapDbCheckpointStore.Options;
import java.net.URI;
import java.nio.file.Path;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Parsing of {@code mapdb:} URIs and discovery through {@link CheckpointStores}. */
class MapDbCheckpointStoreProviderTest {

  @TempDir Path dir;

  private static MapDbCheckpointStoreProvider.Parsed parse(String uri) {
    return MapDbCheckpointStoreProvider.parse(URI.create(uri));
  }

  @Test
  void parsesTheFileAndTheDefaults() {
    assertEquals(
        new MapDbCheckpointStoreProvider.Parsed(
            Path.of("/var/lib/app/cdc.mapdb"), Options.DEFAULTS, true),
        parse("mapdb:/var/lib/app/cdc.mapdb"));
    assertEquals(Path.of("/var/lib/app/cdc.mapdb"), parse("mapdb:///var/lib/app/cdc.mapdb").file());
    assertEquals(Path.of("data/cdc.mapdb"), parse("mapdb:data/cdc.mapdb").file());
    assertEquals(
        Path.of("/var/lib/my app/cdc.mapdb"), parse("mapdb:/var/lib/my%20app/cdc.mapdb").file());
    assertEquals(Path.of("/x/cdc.mapdb"), parse("MAPDB:/x/cdc.mapdb").file());
  }

  @Test
  void parsesTheQueryParameters() {
    assertEquals(
        new Options(true, false), parse("mapdb:/x/c.mapdb?transactions=true&mmap=false").options());
    assertEquals(new Options(false, false), parse("mapdb:/x/c.mapdb?transactions=false").options());
    assertEquals(new Options(true, true), parse("mapdb:/x/c.mapdb?mmap=true").options());
    assertEquals(
        new Options(false, true), parse("mapdb:/x/c.mapdb?mmap=TRUE&transactions=False").options());
    assertEquals(
        new Options(false, true),
        parse("mapdb:rel/c.mapdb?mmap=true&transactions=false").options());
    assertEquals(Path.of("rel/c.mapdb"), parse("mapdb:rel/c.mapdb?mmap=true").file());
    // an empty query, as java.net.URI reads a trailing '?', sets nothing (as for rocksdb:)
    assertEquals(Options.DEFAULTS, parse("mapdb:/x/c.mapdb?").options());
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "mapdb:/x/c.mapdb?sync=true",
        "mapdb:/x/c.mapdb?transactions=true&fileLockDisable=true",
        "mapdb:/x/c.mapdb?transactions",
        "mapdb:/x/c.mapdb?transactions=yes",
        "mapdb:/x/c.mapdb?mmap=1",
        "mapdb:/x/c.mapdb?mmap=",
        "mapdb:/x/c.mapdb?mmap=true&mmap=false",
        "mapdb:rel/c.mapdb?cache=10"
      })
  void badParametersAreRefusedListingTheKnownOnes(String uri) {
    CdcConfigurationException e = assertThrows(CdcConfigurationException.class, () -> parse(uri));
    assertTrue(e.getMessage().contains('"' + uri + '"'), e.getMessage());
    assertTrue(
        e.getMessage()
            .contains(
                "known parameters: transactions=true|false (default true), mmap=true|false (default false)"),
        e.getMessage());
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "mapdb:/",
        "mapdb:///",
        "mapdb:/x/dir/",
        "mapdb://host/x/c.mapdb",
        "mapdb:/x/c.mapdb#frag",
        "file:/x/c.mapdb"
      })
  void urisNamingNoFileAreRefused(String uri) {
    CdcConfigurationException e = assertThrows(CdcConfigurationException.class, () -> parse(uri));
    assertTrue(e.getMessage().contains('"' + uri + '"'), e.getMessage());
  }

  @Test
  void checkpointStoresFindsTheProviderThroughTheServiceLoader() {
    MapDbCheckpointStoreProvider provider =
        (MapDbCheckpointStoreProvider)
            CheckpointStores.providers(getClass().getClassLoader()).get("mapdb");
    assertEquals("mapdb", provider.scheme());
    assertTrue(provider.description().startsWith("mapdb:/"), provider.description());
    Path file = dir.resolve("sub/cdc.mapdb");
    try (CdcCheckpointStore store = CheckpointStores.open("mapdb:" + file)) {
      assertInstanceOf(MapDbCheckpointStore.class, store);
      store.store(CdcCheckpoint.atWatermark("s", PgLsn.of(42)));
      assertEquals("mapdb:" + file, store.location());
    }
    try (CdcCheckpointStore store = CheckpointStores.open("mapdb:" + file + "?mmap=true")) {
      assertEquals(
          Options.DEFAULTS.withMemoryMapped(true), ((MapDbCheckpointStore) store).options());
      assertEquals(Optional.of(CdcCheckpoint.atWatermark("s", PgLsn.of(42))), store.load("s"));
    }
    CdcConfigurationException e =
        assertThrows(
            CdcConfigurationException.class,
            () -> CheckpointStores.open("mapdb:" + file + "?compression=lz4"));
    assertTrue(e.getMessage().contains("unknown parameter \"compression\""), e.getMessage());
  }
}
