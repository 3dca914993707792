package io.datum.cdc.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import io.datum.cdc.CdcStoreException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A store path that cannot be used fails at once naming the path and the remedy (issue #26): a path
 * through a regular file (which fails for root too), a directory this user may not write.
 */
class StoreFilesTest {

  @Test
  void aPathThroughARegularFileNamesThePathAndTheRemedy(@TempDir Path dir) throws Exception {
    Path file = Files.writeString(dir.resolve("a-file"), "x");
    Path store = file.resolve("cdc");
    CdcStoreException e =
        assertThrows(
            CdcStoreException.class,
            () -> StoreFiles.createDirectories(store, "file checkpoint store"));
    assertTrue(
        e.getMessage().startsWith("cannot create file checkpoint store directory " + store)
            && e.getMessage()
                .endsWith(
                    "(a part of the path is a regular file, not a directory: choose another"
                        + " path)"),
        e.getMessage());
    CdcStoreException lock =
        assertThrows(
            CdcStoreException.class, () -> StoreLock.acquire(store.resolve(".lock"), "store"));
    assertTrue(lock.getMessage().contains(store.toString()), lock.getMessage());
  }

  @Test
  void aDirectoryThisUserMayNotWriteNamesTheUserAndTheRemedy(@TempDir Path dir) throws Exception {
    Path locked = Files.createDirectory(dir.resolve("locked"));
    Files.setPosixFilePermissions(locked, PosixFilePermissions.fromString("---------"));
    try {
      // root ignores permission bits (CAP_DAC_OVERRIDE): chmod 000 denies nothing to it
      assumeFalse(
          Files.isWritable(locked),
          "this user (" + System.getProperty("user.name") + ") bypasses file permissions");
      Path store = locked.resolve("cdc");
      CdcStoreException e =
          assertThrows(
              CdcStoreException.class,
              () -> StoreFiles.createDirectories(store, "file checkpoint store"));
      assertTrue(
          e.getMessage()
              .contains(
                  "permission denied: the user this process runs as ("
                      + System.getProperty("user.name")
                      + ") needs write and search access to the directory of "
                      + store),
          e.getMessage());
      assertFalse(e.getMessage().contains("retry"), e.getMessage());
    } finally {
      Files.setPosixFilePermissions(locked, PosixFilePermissions.fromString("rwx------"));
    }
  }

  @Test
  void aReadOnlyOrFullFileSystemIsNamedWithItsRemedy() {
    // the reasons are the operating system's strerror texts, which the JDK's UnixException passes
    // on as FileSystemException.getReason()
    assertEquals(
        "java.nio.file.FileSystemException: /ro/cdc/.lock: Read-only file system (the file system"
            + " is mounted read-only: choose a path on a writable one)",
        StoreFiles.describe(
            new FileSystemException("/ro/cdc/.lock", null, "Read-only file system")));
    assertEquals(
        "java.nio.file.FileSystemException: /full/cdc/s.tmp: No space left on device (the file"
            + " system is full: free space on it or choose another path)",
        StoreFiles.describe(
            new FileSystemException("/full/cdc/s.tmp", null, "No space left on device")));
    // a failure without a known remedy is described as the JDK describes it
    assertEquals(
        "java.nio.file.FileSystemException: /x: Input/output error",
        StoreFiles.describe(new FileSystemException("/x", null, "Input/output error")));
  }
}
