package io.datum.cdc.cli;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.datum.cdc.CdcCheckpoint;
import io.datum.cdc.CdcCheckpointStore;
import io.datum.cdc.CdcConfigurationException;
import io.datum.cdc.CdcException;
import io.datum.cdc.CdcStoreException;
import io.datum.cdc.CheckpointStores;
import io.datum.cdc.ClusterIdentity;
import io.datum.cdc.SlotNames;
import java.io.PrintStream;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code pgcdc checkpoint}: operator commands on checkpoint stores. */
@Command(
    name = "checkpoint",
    mixinStandardHelpOptions = true,
    description = "Inspect checkpoint stores.",
    subcommands = {CheckpointCommand.Show.class})
final class CheckpointCommand {

  /**
   * {@code pgcdc checkpoint show --store URI [--slot NAME]}: prints what a store holds as one JSON
   * document on stdout: {@code {"store":..., "checkpoints":[{"slot":..., "watermark":...,
   * "acknowledged_beyond":[{"tx_end_lsn":..., "event_count":..., "acknowledged":[[from,to],...]}],
   * "acknowledged_runs":[{"first_tx_end_lsn":..., "last_tx_end_lsn":...}],
   * "cluster":{"system_identifier":"...", "timeline":n, "database":...}}]}} (inclusive index
   * ranges; a run: every transaction ending between the two LSNs, inclusive, is fully acknowledged;
   * {@code cluster} is null for a checkpoint written before datum-cdc recorded it).
   */
  @Command(
      name = "show",
      mixinStandardHelpOptions = true,
      description = "Print the checkpoints a store holds, as JSON.")
  static final class Show implements Callable<Integer> {

    @Option(names = "--store", required = true, description = "checkpoint store URI")
    String store;

    @Option(names = "--slot", description = "only this slot (default: every slot in the store)")
    String slot;

    @Option(names = "--verbose", description = "print stack traces of errors")
    boolean verbose;

    PrintStream out = System.out;

    /**
     * Opening a store creates it; for showing one, a path that does not exist is a typo, not an
     * empty store.
     */
    private static void requireExistingPath(String uri) {
      URI parsed;
      try {
        parsed = new URI(uri);
      } catch (URISyntaxException e) {
        return; // CheckpointStores.open reports it
      }
      if (parsed.getScheme() == null
          || parsed.getAuthority() != null
          || !CheckpointStores.providers(CheckpointCommand.class.getClassLoader())
              .containsKey(parsed.getScheme())) {
        return; // unknown scheme or a host: CheckpointStores.open names the problem
      }
      String path = parsed.getPath() != null ? parsed.getPath() : parsed.getSchemeSpecificPart();
      if (path != null && path.indexOf('?') >= 0) {
        path = path.substring(0, path.indexOf('?'));
      }
      if (!parsed.getScheme().equals("memory")
          && path != null
          && !path.isEmpty()
          && !Files.exists(Path.of(path))) {
        throw new CdcStoreException(
            "no checkpoint store at " + uri + ": " + path + " does not exist");
      }
    }

    @Override
    public Integer call() throws Exception {
      if (slot != null) {
        SlotNames.requireValid(slot);
      }
      requireExistingPath(store);
      try (CdcCheckpointStore checkpoints = CheckpointStores.open(store)) {
        List<String> slots;
        if (slot != null) {
          slots = List.of(slot);
        } else {
          try {
            slots = new ArrayList<>(checkpoints.slots());
          } catch (UnsupportedOperationException e) {
            throw new CdcConfigurationException(
                "the store " + checkpoints.location() + " cannot list its slots; pass --slot NAME");
          }
        }
        List<Map<String, Object>> found = new ArrayList<>();
        for (String s : slots) {
          Optional<CdcCheckpoint> checkpoint = checkpoints.load(s);
          checkpoint.ifPresent(c -> found.add(describe(c)));
        }
        if (slot != null && found.isEmpty()) {
          throw new CdcException(
              "the store "
                  + checkpoints.location()
                  + " holds no checkpoint for slot \""
                  + slot
                  + '"');
        }
        Map<String, Object> document = new LinkedHashMap<>();
        document.put("store", checkpoints.location());
        document.put("checkpoints", found);
        ObjectMapper json =
            new ObjectMapper()
                .enable(SerializationFeature.INDENT_OUTPUT)
                .disable(JsonGenerator.Feature.AUTO_CLOSE_TARGET);
        json.writeValue(out, document);
        out.println();
        out.flush();
      }
      return 0;
    }

    private static Map<String, Object> describe(CdcCheckpoint checkpoint) {
      Map<String, Object> c = new LinkedHashMap<>();
      c.put("slot", checkpoint.slot());
      c.put("watermark", checkpoint.watermark().toString());
      List<Map<String, Object>> beyond = new ArrayList<>();
      for (CdcCheckpoint.PartialTransaction tx : checkpoint.acknowledgedBeyond()) {
        Map<String, Object> t = new LinkedHashMap<>();
        t.put("tx_end_lsn", tx.txEndLsn().toString());
        t.put("event_count", tx.eventCount());
        t.put("acknowledged", ranges(tx));
        beyond.add(t);
      }
      c.put("acknowledged_beyond", beyond);
      List<Map<String, Object>> runs = new ArrayList<>();
      for (CdcCheckpoint.AcknowledgedRun run : checkpoint.acknowledgedRuns()) {
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("first_tx_end_lsn", run.firstTxEndLsn().toString());
        r.put("last_tx_end_lsn", run.lastTxEndLsn().toString());
        runs.add(r);
      }
      c.put("acknowledged_runs", runs);
      ClusterIdentity cluster = checkpoint.cluster();
      if (cluster == null) {
        c.put("cluster", null);
      } else {
        Map<String, Object> k = new LinkedHashMap<>();
        k.put("system_identifier", cluster.systemIdentifierText());
        k.put("timeline", cluster.timeline());
        k.put("database", cluster.database());
        c.put("cluster", k);
      }
      return c;
    }

    /** Inclusive {@code [from, to]} ranges, as the file store writes them. */
    private static List<int[]> ranges(CdcCheckpoint.PartialTransaction tx) {
      int[] halfOpen = tx.acknowledgedRanges();
      List<int[]> ranges = new ArrayList<>();
      for (int i = 0; i < halfOpen.length; i += 2) {
        ranges.add(new int[] {halfOpen[i], halfOpen[i + 1] - 1});
      }
      return ranges;
    }
  }
}
