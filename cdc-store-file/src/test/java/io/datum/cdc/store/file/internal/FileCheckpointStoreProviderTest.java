package io.datum.cdc.store.file.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.datum.cdc.CdcCheckpoint;
import io.datum.cdc.CdcCheckpointStore;
import io.datum.cdc.CdcConfigurationException;
import io.datum.cdc.CheckpointStores;
import io.datum.cdc.PgLsn;
import io.datum.cdc.store.file.FileCheckpointStore;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class FileCheckpointStoreProviderTest {

  @TempDir Path dir;

  @Test
  void serviceLoaderFindsTheFileScheme() {
    assertInstanceOf(
        FileCheckpointStoreProvider.class,
        CheckpointStores.providers(getClass().getClassLoader()).get("file"));
    try (CdcCheckpointStore store = CheckpointStores.open("file:" + dir)) {
      assertInstanceOf(FileCheckpointStore.class, store);
      store.store(CdcCheckpoint.atWatermark("s", PgLsn.of(42)));
      assertEquals(dir.toUri().toString(), store.location());
    }
    assertTrue(Files.isRegularFile(dir.resolve("s.checkpoint")));
  }

  @Test
  void locationReopensTheSameDirectory() {
    String location;
    try (CdcCheckpointStore store = CheckpointStores.open("file:" + dir)) {
      store.store(CdcCheckpoint.atWatermark("s", PgLsn.of(42)));
      location = store.location();
    }
    try (CdcCheckpointStore store = CheckpointStores.open(location)) {
      assertEquals(PgLsn.of(42), store.load("s").orElseThrow().watermark());
    }
  }

  @Test
  void acceptsAbsoluteForms() {
    assertEquals(
        Path.of("/var/lib/app/cdc"),
        FileCheckpointStoreProvider.directoryOf(URI.create("file:/var/lib/app/cdc")));
    assertEquals(
        Path.of("/var/lib/app/cdc"),
        FileCheckpointStoreProvider.directoryOf(URI.create("file:///var/lib/app/cdc/")));
    assertEquals(
        Path.of("/var/lib/a b"),
        FileCheckpointStoreProvider.directoryOf(URI.create("file:/var/lib/a%20b")));
    assertEquals(Path.of("/x"), FileCheckpointStoreProvider.directoryOf(URI.create("FILE:/x")));
  }

  @Test
  void relativeFormIsRelativeToTheWorkingDirectory() {
    assertEquals(
        Path.of("rel/dir"), FileCheckpointStoreProvider.directoryOf(URI.create("file:rel/dir")));
    Path relative = Path.of("").toAbsolutePath().relativize(dir.resolve("rel"));
    try (CdcCheckpointStore store = CheckpointStores.open("file:" + relative)) {
      store.store(CdcCheckpoint.atWatermark("s", PgLsn.of(1)));
    }
    assertTrue(Files.isRegularFile(dir.resolve("rel/s.checkpoint")));
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "file:/tmp/cdc?sync=false",
        "file:/tmp/cdc#frag",
        "file:rel?x",
        "file:rel#x",
        "file://host/tmp/cdc",
        "file:/",
        "file:///"
      })
  void rejectsUrisNotNamingADirectory(String text) {
    CdcConfigurationException e =
        assertThrows(
            CdcConfigurationException.class,
            () -> new FileCheckpointStoreProvider().open(URI.create(text)));
    assertTrue(e.getMessage().contains('"' + text + '"'), e.getMessage());
  }

  @Test
  void bareSchemeIsRejected() {
    CdcConfigurationException e =
        assertThrows(CdcConfigurationException.class, () -> CheckpointStores.open("file:"));
    assertTrue(e.getMessage().contains("names no directory"), e.getMessage());
  }
}
