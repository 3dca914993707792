package io.datum.cdc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.datum.cdc.internal.MemoryCheckpointStoreProvider;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Enumeration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CheckpointStoresTest {

  private static final String SERVICES =
      "META-INF/services/" + CheckpointStoreProvider.class.getName();
  private static final String MEMORY_DESCRIPTION =
      "memory: - in-process only, lost on exit (cdc-api)";

  @TempDir Path tmp;

  /**
   * A loader over {@code dir} that loads classes parent-first (so the SPI interface is the test's
   * own) but lists the resources of {@code dir} before the parent's, or only those of {@code dir}.
   */
  private static final class ServicesLoader extends URLClassLoader {
    private final boolean inheritResources;

    ServicesLoader(Path dir, boolean inheritResources) throws IOException {
      super(new URL[] {dir.toUri().toURL()}, CheckpointStoresTest.class.getClassLoader());
      this.inheritResources = inheritResources;
    }

    @Override
    public Enumeration<URL> getResources(String name) throws IOException {
      List<URL> urls = new ArrayList<>(Collections.list(findResources(name)));
      if (inheritResources) {
        urls.addAll(Collections.list(getParent().getResources(name)));
      }
      return Collections.enumeration(urls);
    }
  }

  private Path servicesDir(String... providerClassNames) {
    try {
      Path file = tmp.resolve(SERVICES);
      Files.createDirectories(file.getParent());
      Files.write(file, List.of(providerClassNames), StandardCharsets.UTF_8);
      return tmp;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  // ---- the memory: store through the class path

  @Test
  void openMemoryStringGivesAnEmptyMemoryStore() {
    try (CdcCheckpointStore store = CheckpointStores.open("memory:")) {
      assertEquals(MemoryCheckpointStore.class, store.getClass());
      assertEquals("memory:", store.location());
      assertEquals(Optional.empty(), store.load("s"));
    }
  }

  @Test
  void openMemoryUriGivesAnEmptyMemoryStore() {
    try (CdcCheckpointStore store = CheckpointStores.open(URI.create("memory:/"))) {
      assertEquals(MemoryCheckpointStore.class, store.getClass());
      assertEquals(Optional.empty(), store.load("s"));
    }
  }

  @Test
  void openMemoryStringWithSlashGivesAMemoryStore() {
    try (CdcCheckpointStore store = CheckpointStores.open("memory:/")) {
      assertEquals(MemoryCheckpointStore.class, store.getClass());
    }
  }

  @Test
  void schemeIsCaseInsensitive() {
    try (CdcCheckpointStore store = CheckpointStores.open("MEMORY:")) {
      assertEquals(MemoryCheckpointStore.class, store.getClass());
    }
  }

  @Test
  void eachOpenGivesADistinctStore() {
    try (CdcCheckpointStore a = CheckpointStores.open("memory:");
        CdcCheckpointStore b = CheckpointStores.open("memory:")) {
      assertNotSame(a, b);
      CdcCheckpoint checkpoint = CdcCheckpoint.atWatermark("s", PgLsn.parse("0/10"));
      a.store(checkpoint);
      assertEquals(Optional.of(checkpoint), a.load("s"));
      assertEquals(Optional.empty(), b.load("s"));
    }
  }

  @Test
  void memoryUriWithAPathIsRejected() {
    CdcConfigurationException e =
        assertThrows(CdcConfigurationException.class, () -> CheckpointStores.open("memory:/x"));
    assertEquals(
        "memory checkpoint store URI takes nothing after the scheme: \"memory:/x\"",
        e.getMessage());
    CdcConfigurationException opaque =
        assertThrows(CdcConfigurationException.class, () -> CheckpointStores.open("memory:foo"));
    assertEquals(
        "memory checkpoint store URI takes nothing after the scheme: \"memory:foo\"",
        opaque.getMessage());
  }

  @Test
  void unknownSchemeListsTheAvailableSchemes() {
    CdcConfigurationException e =
        assertThrows(CdcConfigurationException.class, () -> CheckpointStores.open("nosuch:/x"));
    assertEquals(
        "no checkpoint store for scheme \"nosuch\" in URI \"nosuch:/x\"; available on the class"
            + " path: "
            + MEMORY_DESCRIPTION
            + " (add the module that provides it, e.g. io.datum.cdc:cdc-store-nosuch)",
        e.getMessage());
  }

  @Test
  void uriWithoutSchemeIsRejected() {
    CdcConfigurationException e =
        assertThrows(
            CdcConfigurationException.class,
            () -> CheckpointStores.open(URI.create("/var/lib/cdc")));
    assertEquals(
        "checkpoint store URI \"/var/lib/cdc\" has no scheme; use one of " + MEMORY_DESCRIPTION,
        e.getMessage());
  }

  @Test
  void stringWithoutSchemeIsRejected() {
    CdcConfigurationException e =
        assertThrows(CdcConfigurationException.class, () -> CheckpointStores.open("relative/dir"));
    assertEquals(
        "checkpoint store URI \"relative/dir\" has no scheme; use one of " + MEMORY_DESCRIPTION,
        e.getMessage());
  }

  @Test
  void nullStringIsRejected() {
    CdcConfigurationException e =
        assertThrows(CdcConfigurationException.class, () -> CheckpointStores.open((String) null));
    assertEquals("checkpoint store URI must not be null", e.getMessage());
  }

  @Test
  void nullUriIsRejected() {
    CdcConfigurationException e =
        assertThrows(CdcConfigurationException.class, () -> CheckpointStores.open((URI) null));
    assertEquals(
        "checkpoint store URI \"null\" has no scheme; use one of " + MEMORY_DESCRIPTION,
        e.getMessage());
  }

  @Test
  void malformedUriStringIsRejected() {
    CdcConfigurationException e =
        assertThrows(CdcConfigurationException.class, () -> CheckpointStores.open("memory:/a b"));
    assertEquals(
        "invalid checkpoint store URI \"memory:/a b\": Illegal character in path at index 9:"
            + " memory:/a b",
        e.getMessage());
    assertEquals(URISyntaxException.class, e.getCause().getClass());
  }

  @Test
  void providersContainsMemory() {
    Map<String, CheckpointStoreProvider> providers =
        CheckpointStores.providers(CheckpointStoresTest.class.getClassLoader());
    assertEquals(List.of("memory"), List.copyOf(providers.keySet()));
    CheckpointStoreProvider memory = providers.get("memory");
    assertEquals(MemoryCheckpointStoreProvider.class, memory.getClass());
    assertEquals("memory", memory.scheme());
    assertEquals("memory: - in-process only, lost on exit (cdc-api)", memory.description());
    assertThrows(UnsupportedOperationException.class, () -> providers.remove("memory"));
  }

  @Test
  void openUsesTheContextClassLoader() throws IOException {
    Path dir = servicesDir(SecondMemoryProvider.class.getName());
    Thread thread = Thread.currentThread();
    ClassLoader saved = thread.getContextClassLoader();
    try (ServicesLoader loader = new ServicesLoader(dir, true)) {
      thread.setContextClassLoader(loader);
      CdcConfigurationException e =
          assertThrows(CdcConfigurationException.class, () -> CheckpointStores.open("memory:"));
      assertEquals(
          "two checkpoint store providers claim scheme \"memory\": "
              + SecondMemoryProvider.class.getName()
              + " and "
              + MemoryCheckpointStoreProvider.class.getName(),
          e.getMessage());
    } finally {
      thread.setContextClassLoader(saved);
    }
  }

  @Test
  void openWithoutContextClassLoaderUsesTheApiClassLoader() {
    Thread thread = Thread.currentThread();
    ClassLoader saved = thread.getContextClassLoader();
    try {
      thread.setContextClassLoader(null);
      try (CdcCheckpointStore store = CheckpointStores.open("memory:")) {
        assertEquals(MemoryCheckpointStore.class, store.getClass());
      }
    } finally {
      thread.setContextClassLoader(saved);
    }
  }

  // ---- duplicate and broken providers

  @Test
  void sameProviderListedTwiceIsNotADuplicate() throws IOException {
    Path dir =
        servicesDir(
            MemoryCheckpointStoreProvider.class.getName(),
            MemoryCheckpointStoreProvider.class.getName());
    try (ServicesLoader loader = new ServicesLoader(dir, true)) {
      Map<String, CheckpointStoreProvider> providers = CheckpointStores.providers(loader);
      assertEquals(List.of("memory"), List.copyOf(providers.keySet()));
      assertEquals(MemoryCheckpointStoreProvider.class, providers.get("memory").getClass());
    }
  }

  @Test
  void twoProvidersOfOneSchemeAreRejectedNamingBothClasses() throws IOException {
    Path dir =
        servicesDir(
            MemoryCheckpointStoreProvider.class.getName(), SecondMemoryProvider.class.getName());
    // a plain URLClassLoader: the parent's services file (cdc-api's own) comes first
    try (URLClassLoader loader =
        new URLClassLoader(
            new URL[] {dir.toUri().toURL()}, CheckpointStoresTest.class.getClassLoader())) {
      String expected =
          "two checkpoint store providers claim scheme \"memory\": "
              + MemoryCheckpointStoreProvider.class.getName()
              + " and "
              + SecondMemoryProvider.class.getName();
      CdcConfigurationException e =
          assertThrows(CdcConfigurationException.class, () -> CheckpointStores.providers(loader));
      assertEquals(expected, e.getMessage());
      CdcConfigurationException onOpen =
          assertThrows(
              CdcConfigurationException.class,
              () -> CheckpointStores.open(URI.create("memory:/"), loader));
      assertEquals(expected, onOpen.getMessage());
      CdcConfigurationException onOtherScheme =
          assertThrows(
              CdcConfigurationException.class,
              () -> CheckpointStores.open(URI.create("nosuch:/x"), loader));
      assertEquals(expected, onOtherScheme.getMessage());
    }
  }

  @Test
  void brokenProviderDoesNotHideTheMemoryProvider() throws IOException {
    // the broken entries are listed before cdc-api's own services file
    Path dir = servicesDir("io.datum.cdc.NoSuchProvider", PgLsn.class.getName());
    try (ServicesLoader loader = new ServicesLoader(dir, true)) {
      Map<String, CheckpointStoreProvider> providers = CheckpointStores.providers(loader);
      assertEquals(List.of("memory"), List.copyOf(providers.keySet()));
      assertEquals(MemoryCheckpointStoreProvider.class, providers.get("memory").getClass());
      try (CdcCheckpointStore store = CheckpointStores.open(URI.create("memory:/"), loader)) {
        assertEquals(MemoryCheckpointStore.class, store.getClass());
      }
    }
  }

  @Test
  void brokenEntriesBeforeAWorkingOneInTheSameFileDoNotHideIt() throws IOException {
    Path dir =
        servicesDir(
            "io.datum.cdc.NoSuchProvider",
            PgLsn.class.getName(),
            MemoryCheckpointStoreProvider.class.getName());
    try (ServicesLoader loader = new ServicesLoader(dir, false)) {
      Map<String, CheckpointStoreProvider> providers = CheckpointStores.providers(loader);
      assertEquals(List.of("memory"), List.copyOf(providers.keySet()));
      assertEquals(MemoryCheckpointStoreProvider.class, providers.get("memory").getClass());
    }
  }

  @Test
  void onlyBrokenProvidersAreReported() throws IOException {
    // (a class of a named module such as java.lang.String would be skipped silently by
    // ServiceLoader; PgLsn is on the class path, so it is reported as "not a subtype")
    Path dir = servicesDir("io.datum.cdc.NoSuchProvider", PgLsn.class.getName());
    try (ServicesLoader loader = new ServicesLoader(dir, false)) {
      CdcConfigurationException e =
          assertThrows(CdcConfigurationException.class, () -> CheckpointStores.providers(loader));
      assertEquals(
          "no checkpoint store provider could be loaded: "
              + "io.datum.cdc.CheckpointStoreProvider: Provider io.datum.cdc.NoSuchProvider"
              + " not found; "
              + "io.datum.cdc.CheckpointStoreProvider: io.datum.cdc.PgLsn not a subtype",
          e.getMessage());
    }
  }

  @Test
  void noProvidersAtAll() throws IOException {
    Path empty = Files.createDirectories(tmp.resolve("empty"));
    try (ServicesLoader loader = new ServicesLoader(empty, false)) {
      assertEquals(Map.of(), CheckpointStores.providers(loader));
      CdcConfigurationException e =
          assertThrows(
              CdcConfigurationException.class,
              () -> CheckpointStores.open(URI.create("memory:/"), loader));
      assertEquals(
          "no checkpoint store for scheme \"memory\" in URI \"memory:/\"; available on the class"
              + " path: none (add the module that provides it, e.g. io.datum.cdc:cdc-store-memory)",
          e.getMessage());
    }
  }

  @Test
  void openWithExplicitLoaderFindsMemory() throws IOException {
    Path dir = servicesDir(MemoryCheckpointStoreProvider.class.getName());
    try (ServicesLoader loader = new ServicesLoader(dir, false);
        CdcCheckpointStore store = CheckpointStores.open(URI.create("memory:/"), loader)) {
      assertEquals(MemoryCheckpointStore.class, store.getClass());
      assertSame(MemoryCheckpointStore.class.getClassLoader(), store.getClass().getClassLoader());
    }
  }
}
