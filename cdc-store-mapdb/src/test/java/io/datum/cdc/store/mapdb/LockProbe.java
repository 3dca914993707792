package io.datum.cdc.store.mapdb;

import io.datum.cdc.CdcStoreException;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/**
 * Run in a child JVM by {@link LockTest}. {@code try <file>} opens the store and prints {@code
 * LOCKED_OUT <message>} or {@code OPENED}; {@code hold <file>} opens it, prints {@code HOLDING},
 * and closes it when its standard input ends, then prints {@code RELEASED}; {@code mapdb-hold
 * <file>} does the same with a plain MapDB database on the file (MapDB's own lock, no {@code .lock}
 * file), as an unrelated MapDB program would.
 */
public final class LockProbe {

  private LockProbe() {}

  public static void main(String[] args) throws Exception {
    Path file = Path.of(args[1]);
    if (args[0].equals("try")) {
      try (MapDbCheckpointStore store = MapDbCheckpointStore.open(file)) {
        store.slots(); // touch it, so the store is really open
        System.out.println("OPENED");
      } catch (CdcStoreException e) {
        System.out.println("LOCKED_OUT " + e.getMessage());
      }
    } else if (args[0].equals("mapdb-hold")) {
      org.mapdb.DB db = org.mapdb.DBMaker.fileDB(file.toFile()).make();
      System.out.println("HOLDING");
      System.out.flush();
      BufferedReader in =
          new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
      while (in.readLine() != null) {
        // wait for the parent to close our standard input
      }
      db.close();
      System.out.println("RELEASED");
    } else {
      try (MapDbCheckpointStore store = MapDbCheckpointStore.open(file)) {
        store.slots(); // touch it, so the store is really open
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
