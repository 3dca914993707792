package io.datum.cdc.testkit;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Finds cycles between the packages of a module's compiled classes: package A uses a class of
 * package B (a reference in its class files' constant pools: a class, a field or method descriptor,
 * a generic signature, an annotation) and B, directly or through others, uses A. Each module's unit
 * tests call {@link #assertNone(Class)} with one of its classes. Javadoc-only references leave no
 * trace in class files and do not count.
 */
public final class PackageCycles {

  private static final Pattern DESCRIPTOR_CLASS = Pattern.compile("L([\\w/$]+)[;<]");

  private PackageCycles() {}

  /**
   * Fails if the packages of the module that holds {@code anyClass} (its classes directory or jar)
   * form a cycle.
   *
   * @param anyClass a class of the module to check
   * @throws AssertionError naming every cycle (the packages in it, and one class that makes each
   *     dependency)
   * @throws UncheckedIOException if the class files cannot be read
   */
  public static void assertNone(Class<?> anyClass) {
    Path root = location(anyClass);
    List<String> cycles = cycles(root);
    if (!cycles.isEmpty()) {
      throw new AssertionError("package cycles in " + root + ":\n  " + String.join("\n  ", cycles));
    }
  }

  /**
   * Returns the package cycles among the class files under a directory (or in a jar).
   *
   * @param root a classes directory or a jar
   * @return one line per cycle, {@code a -> b (a.X uses b.Y) -> a (...)}; empty if none
   * @throws UncheckedIOException if a class file cannot be read
   */
  public static List<String> cycles(Path root) {
    Map<String, Map<String, String>> edges = new TreeMap<>(); // package -> package -> example
    references(root)
        .forEach(
            (from, targets) -> {
              String fromPackage = packageOf(from);
              Map<String, String> out = edges.computeIfAbsent(fromPackage, k -> new TreeMap<>());
              for (String to : targets) {
                String toPackage = packageOf(to);
                if (!toPackage.equals(fromPackage)) {
                  out.putIfAbsent(toPackage, from + " uses " + to);
                }
              }
            });
    edges.values().forEach(targets -> targets.keySet().retainAll(edges.keySet()));
    return describe(edges, stronglyConnected(edges));
  }

  /**
   * Returns which classes each class of a module refers to, as {@link #cycles} reads them (so that
   * a module's tests can check its layering: which package may use which).
   *
   * @param anyClass a class of the module to read (its classes directory or jar)
   * @return binary class names (dotted, {@code $} for nested classes), each mapped to the classes
   *     it refers to in other packages, sorted
   * @throws UncheckedIOException if the class files cannot be read
   */
  public static Map<String, Set<String>> references(Class<?> anyClass) {
    return references(location(anyClass));
  }

  private static Map<String, Set<String>> references(Path root) {
    Map<String, Set<String>> references = new TreeMap<>();
    try {
      if (Files.isDirectory(root)) {
        try (Stream<Path> files = Files.walk(root)) {
          for (Path p : files.filter(f -> f.toString().endsWith(".class")).toList()) {
            try (InputStream in = Files.newInputStream(p)) {
              read(in, references);
            }
          }
        }
      } else {
        try (java.util.jar.JarFile jar = new java.util.jar.JarFile(root.toFile())) {
          for (var e : java.util.Collections.list(jar.entries())) {
            if (e.getName().endsWith(".class") && !e.getName().startsWith("META-INF/")) {
              try (InputStream in = jar.getInputStream(e)) {
                read(in, references);
              }
            }
          }
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read the classes of " + root, e);
    }
    return references;
  }

  private static Path location(Class<?> c) {
    try {
      return Path.of(c.getProtectionDomain().getCodeSource().getLocation().toURI());
    } catch (URISyntaxException e) {
      throw new IllegalArgumentException("no file location for " + c, e);
    }
  }

  /** Reads one class file's constant pool and adds the classes of other packages it refers to. */
  private static void read(InputStream raw, Map<String, Set<String>> references)
      throws IOException {
    DataInputStream in = new DataInputStream(raw);
    if (in.readInt() != 0xCAFEBABE) {
      return;
    }
    in.readUnsignedShort();
    in.readUnsignedShort();
    int count = in.readUnsignedShort();
    String[] utf8 = new String[count];
    Map<Integer, Integer> classNames = new HashMap<>(); // CONSTANT_Class entry -> its name
    for (int i = 1; i < count; i++) {
      int tag = in.readUnsignedByte();
      switch (tag) {
        case 1 -> utf8[i] = in.readUTF();
        case 7 -> classNames.put(i, in.readUnsignedShort());
        case 8, 16, 19, 20 -> in.readUnsignedShort();
        case 15 -> {
          in.readUnsignedByte();
          in.readUnsignedShort();
        }
        case 3, 4, 9, 10, 11, 12, 17, 18 -> in.readInt();
        case 5, 6 -> {
          in.readLong();
          i++;
        }
        default -> throw new IOException("unknown constant pool tag " + tag);
      }
    }
    in.readUnsignedShort(); // access flags
    String self = utf8[classNames.getOrDefault(in.readUnsignedShort(), 0)]; // this_class
    if (self == null || self.equals("module-info") || self.endsWith("/package-info")) {
      return;
    }
    String from = packageOf(self);
    Set<String> targets = references.computeIfAbsent(self.replace('/', '.'), k -> new TreeSet<>());
    Set<String> referenced = new TreeSet<>();
    for (int index : classNames.values()) {
      String name = utf8[index];
      if (name != null && !name.startsWith("[")) {
        referenced.add(name);
      }
    }
    for (String s : utf8) {
      if (s != null && s.indexOf(';') > 0) {
        Matcher m = DESCRIPTOR_CLASS.matcher(s);
        while (m.find()) {
          referenced.add(m.group(1));
        }
      }
    }
    for (String name : referenced) {
      String to = packageOf(name);
      // a name without a package is a string constant that looked like a descriptor ("...L;")
      if (!to.equals(from) && !to.isEmpty()) {
        targets.add(name.replace('/', '.'));
      }
    }
  }

  private static String packageOf(String name) {
    String dotted = name.replace('/', '.');
    int dot = dotted.lastIndexOf('.');
    return dot < 0 ? "" : dotted.substring(0, dot);
  }

  /** Tarjan's algorithm: the strongly connected components of more than one package. */
  private static List<List<String>> stronglyConnected(Map<String, Map<String, String>> edges) {
    Map<String, Integer> index = new HashMap<>();
    Map<String, Integer> low = new HashMap<>();
    Deque<String> stack = new ArrayDeque<>();
    Set<String> onStack = new TreeSet<>();
    List<List<String>> out = new ArrayList<>();
    int[] counter = {0};
    for (String v : edges.keySet()) {
      if (!index.containsKey(v)) {
        connect(v, edges, index, low, stack, onStack, out, counter);
      }
    }
    return out;
  }

  private static void connect(
      String v,
      Map<String, Map<String, String>> edges,
      Map<String, Integer> index,
      Map<String, Integer> low,
      Deque<String> stack,
      Set<String> onStack,
      List<List<String>> out,
      int[] counter) {
    index.put(v, counter[0]);
    low.put(v, counter[0]++);
    stack.push(v);
    onStack.add(v);
    for (String w : edges.getOrDefault(v, Map.of()).keySet()) {
      if (!index.containsKey(w)) {
        connect(w, edges, index, low, stack, onStack, out, counter);
        low.put(v, Math.min(low.get(v), low.get(w)));
      } else if (onStack.contains(w)) {
        low.put(v, Math.min(low.get(v), index.get(w)));
      }
    }
    if (low.get(v).equals(index.get(v))) {
      List<String> component = new ArrayList<>();
      String w;
      do {
        w = stack.pop();
        onStack.remove(w);
        component.add(w);
      } while (!w.equals(v));
      if (component.size() > 1) {
        out.add(component);
      }
    }
  }

  private static List<String> describe(
      Map<String, Map<String, String>> edges, List<List<String>> components) {
    List<String> lines = new ArrayList<>();
    for (List<String> component : components) {
      StringBuilder b = new StringBuilder(String.join(" <-> ", new TreeSet<>(component)) + ":");
      for (String from : new TreeSet<>(component)) {
        for (Map.Entry<String, String> e : edges.get(from).entrySet()) {
          if (component.contains(e.getKey())) {
            b.append("\n    ").append(from).append(" -> ").append(e.getKey());
            b.append(" (").append(e.getValue()).append(')');
          }
        }
      }
      lines.add(b.toString());
    }
    return lines;
  }
}
