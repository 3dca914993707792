package io.datum.cdc.embedded;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Which temporary directories the sweep deletes, without starting a server. */
class ScratchDirectoriesTest {

  @Test
  void sweepsTheDirectoriesOfDeadOwnersAndKeepsTheLivingOnes(@TempDir Path tmp) throws Exception {
    Process exited = new ProcessBuilder("true").start();
    exited.waitFor();
    Path dead = owned(tmp, "dead", exited.pid() + " 0");
    Path mine = owned(tmp, "mine", Long.toString(ProcessHandle.current().pid()));
    Path reused =
        owned(tmp, "reused", ProcessHandle.current().pid() + " " + 1_000L); // started in 1970
    Path unowned = Files.createDirectory(tmp.resolve(ScratchDirectories.PREFIX + "unowned"));
    Path youngUnowned = Files.createDirectory(tmp.resolve(ScratchDirectories.PREFIX + "young"));
    Files.setLastModifiedTime(unowned, FileTime.from(Instant.now().minusSeconds(3600)));
    Path other = Files.createDirectory(tmp.resolve("someone-else"));
    Files.setLastModifiedTime(other, FileTime.from(Instant.now().minusSeconds(3600)));

    ScratchDirectories.sweep(tmp, "data");

    assertFalse(Files.exists(dead), "a dead owner's directory is deleted");
    assertFalse(Files.exists(reused), "a directory whose owner's pid was reused is deleted");
    assertFalse(Files.exists(unowned), "an old directory without owner is deleted");
    assertTrue(Files.exists(mine), "a living owner's directory is kept");
    assertTrue(Files.exists(youngUnowned), "a young directory without owner may be being set up");
    assertTrue(Files.exists(other), "directories of other names are not touched");
  }

  private static Path owned(Path tmp, String name, String owner) throws Exception {
    Path dir = Files.createDirectory(tmp.resolve(ScratchDirectories.PREFIX + name));
    Files.createDirectories(dir.resolve("data"));
    Files.writeString(dir.resolve("owner"), owner + "\n", StandardCharsets.US_ASCII);
    return dir;
  }
}
