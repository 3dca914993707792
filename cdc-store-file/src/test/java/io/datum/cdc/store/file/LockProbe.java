package io.datum.cdc.store.file;

import io.datum.cdc.CdcStoreException;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/**
 * Run in a child JVM by {@link CrossProcessLockTest}. {@code try <dir>} opens the store and prints
 * {@code LOCKED_OUT <message>} or {@code OPENED}; {@code hold <dir>} opens it, prints {@code
 * HOLDING}, and closes it when its standard input ends.
 */
public final class LockProbe {

  private LockProbe() {}

  public static void main(String[] args) throws Exception {
    Path dir = Path.of(args[1]);
    if (args[0].equals("try")) {
      try (FileCheckpointStore store = FileCheckpointStore.open(dir)) {
        System.out.println("OPENED");
      } catch (CdcStoreException e) {
        System.out.println("LOCKED_OUT " + e.getMessage());
      }
    } else {
      try (FileCheckpointStore store = FileCheckpointStore.open(dir)) {
        System.out.println("HOLDING");
        System.out.flush();
        BufferedReader in =
            new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        while (in.readLine() != null) {
          // wait for the parent to close our standard input
        }
      }
      System.out.println("RELEASED");
    }
    System.out.flush();
  }
}
