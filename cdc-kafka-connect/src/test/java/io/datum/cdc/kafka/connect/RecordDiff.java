package io.datum.cdc.kafka.connect;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.NullNode;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * Compares two records written by Connect's JsonConverter with schemas ({@code {"schema": ...,
 * "payload": ...}}) and lists every difference by path. Struct schemas' {@code fields} arrays are
 * matched by field name (their order is compared on its own), so a path names the column: {@code
 * value.schema/after/n/optional}, {@code value.payload/after/n}.
 */
final class RecordDiff {

  /**
   * One difference.
   *
   * @param path where: {@code key.schema/...}, {@code value.payload/...}, {@code header/<name>},
   *     {@code record} for a record one side lacks
   * @param debezium Debezium's value there ({@link NullNode} when absent)
   * @param ours ours ({@link NullNode} when absent)
   */
  record Difference(String path, JsonNode debezium, JsonNode ours) {
    @Override
    public String toString() {
      return path + ": Debezium " + debezium + ", ours " + ours;
    }
  }

  private final List<Difference> differences = new ArrayList<>();

  private RecordDiff() {}

  /**
   * Returns the differences of two JSON trees under a path prefix.
   *
   * @param prefix the path of the two trees
   * @param debezium Debezium's tree, or null
   * @param ours ours, or null
   * @return the differences, empty if the trees are equal
   */
  static List<Difference> diff(String prefix, JsonNode debezium, JsonNode ours) {
    RecordDiff d = new RecordDiff();
    d.walk(prefix, orNull(debezium), orNull(ours));
    return d.differences;
  }

  private static JsonNode orNull(JsonNode node) {
    return node == null || node.isMissingNode() ? NullNode.getInstance() : node;
  }

  private void walk(String path, JsonNode a, JsonNode b) {
    if (a.equals(b)) {
      return;
    }
    if (a.isObject() && b.isObject()) {
      Set<String> names = new LinkedHashSet<>();
      a.fieldNames().forEachRemaining(names::add);
      b.fieldNames().forEachRemaining(names::add);
      for (String name : names) {
        if ("fields".equals(name) && a.path(name).isArray() && b.path(name).isArray()) {
          fields(path, a.get(name), b.get(name));
        } else {
          walk(path + "/" + name, orNull(a.get(name)), orNull(b.get(name)));
        }
      }
      return;
    }
    if (a.isArray() && b.isArray() && a.size() == b.size()) {
      for (int i = 0; i < a.size(); i++) {
        walk(path + "[" + i + "]", a.get(i), b.get(i));
      }
      return;
    }
    differences.add(new Difference(path, a, b));
  }

  /** A Struct schema's fields, matched by name; their order compared apart. */
  private void fields(String path, JsonNode a, JsonNode b) {
    List<String> namesA = names(a);
    List<String> namesB = names(b);
    Set<String> all = new LinkedHashSet<>(namesA);
    all.addAll(namesB);
    for (String name : all) {
      walk(path + "/" + name, orNull(byName(a, name)), orNull(byName(b, name)));
    }
    List<String> common = new ArrayList<>(namesA);
    common.retainAll(namesB);
    List<String> commonB = new ArrayList<>(namesB);
    commonB.retainAll(namesA);
    if (!common.equals(commonB)) {
      differences.add(
          new Difference(
              path + "(field order)",
              ConnectClusters.JSON.valueToTree(common),
              ConnectClusters.JSON.valueToTree(commonB)));
    }
  }

  private static List<String> names(JsonNode fields) {
    List<String> names = new ArrayList<>();
    for (Iterator<JsonNode> it = fields.elements(); it.hasNext(); ) {
      names.add(it.next().path("field").asText());
    }
    return names;
  }

  private static JsonNode byName(JsonNode fields, String name) {
    for (JsonNode f : fields) {
      if (name.equals(f.path("field").asText())) {
        return f;
      }
    }
    return null;
  }
}
