package io.datum.cdc.core;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.datum.cdc.embedded.ChildJvm;
import io.datum.cdc.embedded.EmbeddedPostgresServer;
import io.datum.cdc.testkit.EmbeddedPostgresTest;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * SIGKILL of a process running 16 handler threads ({@link ParallelSigkillChild}, KEY ordering,
 * per-event durability, a {@code file:} store, up to 1 ms per event) while a writer thread inserts,
 * updates and deletes rows: the first child asks for an online snapshot of the table's 3,000
 * earlier rows, which later children resume; six kills once the child has acknowledged a random
 * number of events (the first three also once it took a random number of read rows: inside the
 * snapshot), then a last child that runs until every change is delivered and the snapshot complete.
 * Checked: every change the writer committed is delivered (nothing lost); every row of the table at
 * the end was read or inserted; no change whose {@code acknowledge} returned in one child is
 * delivered again by a later one; within each child, each row's read row and changes are taken in
 * the order of their values (a read row never after a later change of its row). {@code
 * -Ddatum.cdc.test.seed} repeats a run's kill points.
 */
@EmbeddedPostgresTest
class ParallelSigkillTest {

  private static final int KILLS = 6;

  /**
   * Rows that exist before the slot: only the online snapshot the first child asks for reads them.
   */
  private static final int ROWS = 3000;

  private final EmbeddedPostgresServer pg;

  @TempDir Path tmp;

  ParallelSigkillTest(EmbeddedPostgresServer pg) {
    this.pg = pg;
  }

  @Test
  @Timeout(value = 240, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
  void sixteenThreadsLoseNothingAndDeliverNothingAcknowledgedAgainAfterSigkills() throws Exception {
    pg.execute(
        "CREATE TABLE par_kill (id int PRIMARY KEY, v int NOT NULL)",
        "INSERT INTO par_kill SELECT g, 0 FROM generate_series(1, " + ROWS + ") g",
        "CREATE PUBLICATION par_kill FOR TABLE par_kill",
        "SELECT pg_create_logical_replication_slot('par_kill', 'pgoutput')");
    long seed = Long.getLong("datum.cdc.test.seed", System.nanoTime());
    Random random = new Random(seed);
    String context = "seed " + seed + " (-Ddatum.cdc.test.seed to repeat)";
    Path store = Files.createDirectories(tmp.resolve("store"));

    Set<String> committed = java.util.concurrent.ConcurrentHashMap.newKeySet();
    AtomicReference<Throwable> writerFailure = new AtomicReference<>();
    AtomicBoolean writing = new AtomicBoolean(true);
    Thread writer = new Thread(() -> write(seed, committed, writing, writerFailure), "writer");
    writer.start();

    List<List<String>> incarnations = new ArrayList<>();
    try {
      for (int kill = 1; kill <= KILLS; kill++) {
        int acks = 30 + random.nextInt(150);
        // the first kills fall inside the snapshot: after some of its rows were taken
        int reads = kill <= 3 ? 50 + random.nextInt(600) : 0;
        String when = context + ", child " + kill;
        try (Child child =
            Child.start(tmp.resolve("child-" + kill + ".err"), pg, store, kill == 1)) {
          await()
              .atMost(Duration.ofSeconds(60))
              .until(
                  () ->
                      child.failed() || (child.count("acked ") >= acks && child.reads() >= reads));
          child.kill();
          child.assertNotFailed(when);
          incarnations.add(child.lines());
        }
        assertNull(writerFailure.get(), () -> "writer: " + writerFailure.get());
      }
    } finally {
      writing.set(false);
      writer.join(30_000);
    }
    assertNull(writerFailure.get(), () -> "writer: " + writerFailure.get());
    try (Child last = Child.start(tmp.resolve("child-last.err"), pg, store, false)) {
      await()
          .atMost(Duration.ofSeconds(90))
          .until(
              () -> {
                if (last.failed()) {
                  return true;
                }
                Set<String> got = new HashSet<>();
                for (List<String> lines : incarnations) {
                  got.addAll(changes(lines));
                }
                got.addAll(changes(last.lines()));
                return got.containsAll(committed) && unread(incarnations, last.lines()).isEmpty();
              });
      last.kill();
      last.assertNotFailed(context + ", last child");
      incarnations.add(last.lines());
    }

    Set<String> got = new HashSet<>();
    for (List<String> lines : incarnations) {
      got.addAll(changes(lines));
    }
    Set<String> lost = new HashSet<>(committed);
    lost.removeAll(got);
    assertEquals(Set.of(), lost, context + ": changes never delivered");
    assertEquals(
        Set.of(),
        unread(incarnations, List.of()),
        context + ": rows of the table neither read by the snapshot nor inserted since");
    assertTrue(committed.size() > 200, context + ": the writer made " + committed.size());

    long gotLines =
        incarnations.stream().flatMap(List::stream).filter(l -> l.startsWith("got ")).count();
    System.out.printf(
        "%s: %d changes committed, %d taken by the handlers over %d children (%d again after a"
            + " kill)%n",
        context, committed.size(), gotLines, incarnations.size(), gotLines - committed.size());
    System.out.println(
        context
            + ": read rows per child "
            + incarnations.stream()
                .map(l -> l.stream().filter(x -> x.matches("got \\S+ READ .*")).count())
                .toList());
    Set<String> acknowledged = new HashSet<>();
    for (int k = 0; k < incarnations.size(); k++) {
      for (String line : incarnations.get(k)) {
        if (line.startsWith("got ") && !line.split(" ")[2].equals("READ")) {
          // a read row's offset is its chunk's position and its place in it: chunk numbers start
          // again in each child, so only the stream's offsets name one event across children
          String at = line.split(" ")[1];
          assertTrue(
              !acknowledged.contains(at),
              context + ": child " + (k + 1) + " got " + at + ", acknowledged by an earlier one");
        }
      }
      for (String line : incarnations.get(k)) {
        if (line.startsWith("acked ")) {
          acknowledged.add(line.substring("acked ".length()));
        }
      }
      for (String line : incarnations.get(k)) {
        if (line.startsWith("got ") && line.split(" ")[2].equals("READ")) {
          acknowledged.remove(line.split(" ")[1]); // read rows' offsets are not checked
        }
      }
      // each row's events, in the order the handler threads took them, follow the writer's order:
      // a read row comes after the changes of its row before it and before the later ones: its
      // value is at least the last one seen, an update's is above it
      Map<String, Integer> lastV = new HashMap<>();
      for (String line : incarnations.get(k)) {
        String[] f = line.split(" ");
        if (f[0].equals("got") && (f[2].equals("UPDATE") || f[2].equals("READ"))) {
          int v = Integer.parseInt(f[4]);
          Integer before = lastV.put(f[3], v);
          boolean read = f[2].equals("READ");
          assertTrue(
              before == null || (read ? before <= v : before < v),
              context
                  + ": child "
                  + (k + 1)
                  + ", row "
                  + f[3]
                  + ": "
                  + f[2]
                  + " v "
                  + v
                  + " after "
                  + before);
        }
      }
    }
  }

  /** The writer: small transactions until told to stop; records each committed change. */
  private void write(
      long seed, Set<String> committed, AtomicBoolean writing, AtomicReference<Throwable> failure) {
    Random random = new Random(seed ^ 0x5DEECE66DL);
    Map<Integer, Integer> live = new HashMap<>();
    List<Integer> ids = new ArrayList<>();
    for (int id = 1; id <= ROWS; id++) { // the rows the snapshot reads, changed while it runs
      live.put(id, 0);
      ids.add(id);
    }
    int nextId = ROWS + 1;
    try (Connection c = DriverManager.getConnection(pg.jdbcUrl());
        Statement s = c.createStatement()) {
      c.setAutoCommit(false);
      while (writing.get()) {
        List<String> changes = new ArrayList<>();
        int n = 1 + random.nextInt(4);
        for (int i = 0; i < n; i++) {
          int dice = random.nextInt(10);
          if (dice < 4 || ids.size() < 10) {
            int id = nextId++;
            s.execute("INSERT INTO par_kill VALUES (" + id + ", 0)");
            live.put(id, 0);
            ids.add(id);
            changes.add("INSERT " + id + " 0");
          } else if (dice < 9) {
            int id = ids.get(random.nextInt(ids.size()));
            int v = live.get(id) + 1;
            s.execute("UPDATE par_kill SET v = " + v + " WHERE id = " + id);
            live.put(id, v);
            changes.add("UPDATE " + id + " " + v);
          } else {
            int id = ids.remove(random.nextInt(ids.size()));
            s.execute("DELETE FROM par_kill WHERE id = " + id);
            live.remove(id);
            changes.add("DELETE " + id + " -");
          }
        }
        c.commit();
        committed.addAll(changes);
        LockSupport.parkNanos(2_000_000); // the load's pace, not a synchronisation
      }
    } catch (Throwable t) {
      failure.set(t);
    }
  }

  /**
   * The ids of the table's rows now that no child read (snapshot) and the writer did not insert:
   * empty once the snapshot, resumed across the kills, is complete.
   */
  private Set<String> unread(List<List<String>> incarnations, List<String> more)
      throws java.sql.SQLException {
    Set<String> seen = new HashSet<>();
    List<List<String>> all = new ArrayList<>(incarnations);
    all.add(more);
    for (List<String> lines : all) {
      for (String line : lines) {
        String[] f = line.split(" ");
        if (f[0].equals("got") && (f[2].equals("READ") || f[2].equals("INSERT"))) {
          seen.add(f[3]);
        }
      }
    }
    Set<String> unread = new HashSet<>();
    try (Connection c = DriverManager.getConnection(pg.jdbcUrl());
        Statement s = c.createStatement();
        java.sql.ResultSet rs = s.executeQuery("SELECT id FROM par_kill")) {
      while (rs.next()) {
        if (!seen.contains(rs.getString(1))) {
          unread.add(rs.getString(1));
        }
      }
    }
    return unread;
  }

  /** The changes a child's got lines name: {@code KIND id v}. */
  private static Set<String> changes(List<String> lines) {
    Set<String> out = new HashSet<>();
    for (String line : lines) {
      if (line.startsWith("got ")) {
        String[] f = line.split(" ");
        out.add(f[2] + " " + f[3] + " " + f[4]);
      }
    }
    return out;
  }

  /** A child JVM running {@link ParallelSigkillChild}; its stdout collected by a thread. */
  private static final class Child implements AutoCloseable {
    private final Process process;
    private final Path stderr;
    private final List<String> lines = new ArrayList<>();
    private final Thread reader;

    private Child(Process process, Path stderr) {
      this.process = process;
      this.stderr = stderr;
      this.reader =
          new Thread(
              () -> {
                try (BufferedReader in =
                    new BufferedReader(
                        new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                  for (String line = in.readLine(); line != null; line = in.readLine()) {
                    synchronized (lines) {
                      lines.add(line);
                    }
                  }
                } catch (IOException e) {
                  synchronized (lines) {
                    lines.add("FAILED reading the child: " + e);
                  }
                }
              },
              "child-reader");
      reader.start();
    }

    static Child start(Path stderr, EmbeddedPostgresServer pg, Path store, boolean snapshot)
        throws IOException {
      List<String> command =
          List.of(
              Path.of(System.getProperty("java.home"), "bin", "java").toString(),
              "-cp",
              ChildJvm.classPath(),
              ParallelSigkillChild.class.getName(),
              pg.jdbcUrl(),
              pg.user(),
              store.toString(),
              "16",
              snapshot ? "snapshot" : "-");
      Process process =
          new ProcessBuilder(command)
              .redirectError(ProcessBuilder.Redirect.to(stderr.toFile()))
              .start();
      return new Child(process, stderr);
    }

    List<String> lines() {
      synchronized (lines) {
        return new ArrayList<>(lines);
      }
    }

    long count(String prefix) {
      synchronized (lines) {
        return lines.stream().filter(l -> l.startsWith(prefix)).count();
      }
    }

    long reads() {
      synchronized (lines) {
        return lines.stream().filter(l -> l.matches("got \\S+ READ .*")).count();
      }
    }

    boolean failed() {
      return !process.isAlive() || count("FAILED") > 0;
    }

    void assertNotFailed(String when) throws IOException {
      List<String> failures = lines().stream().filter(l -> l.startsWith("FAILED")).toList();
      if (!failures.isEmpty()) {
        String text = Files.readString(stderr);
        throw new AssertionError(
            when
                + ": the child failed: "
                + failures
                + "\nchild stderr:\n"
                + (text.length() > 4000 ? text.substring(text.length() - 4000) : text));
      }
    }

    void kill() throws InterruptedException {
      process.toHandle().destroyForcibly(); // SIGKILL
      assertTrue(process.waitFor(30, TimeUnit.SECONDS), "child did not die");
      reader.join(10_000);
    }

    @Override
    public void close() throws IOException {
      if (process.isAlive()) {
        process.destroyForcibly();
      }
      process.getOutputStream().close();
    }
  }
}
