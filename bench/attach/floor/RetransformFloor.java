// SPDX-License-Identifier: Apache-2.0
import java.lang.classfile.ClassFile;
import java.lang.classfile.ClassTransform;
import java.lang.classfile.CodeBuilder;
import java.lang.classfile.CodeElement;
import java.lang.classfile.CodeTransform;
import java.lang.instrument.ClassFileTransformer;
import java.lang.instrument.Instrumentation;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.ProtectionDomain;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The floor under a cpu=times session's retransformations: a java.lang.instrument agent
 * (Agent-Class) that retransforms classes as an instrumenting profiler does, in two loads.
 * {@code jcmd PID JVMTI.agent_load floor.jar in=NAMES_FILE} retransforms the loaded classes
 * named in NAMES_FILE (one binary name a line) with a NOP prepended to every method body (the
 * JDK's ClassFile API); that code then runs until {@code jcmd PID JVMTI.agent_load floor.jar out}
 * retransforms the same classes again, and the original bytes come back (the transformer
 * declines). Nothing else: no hooks, no events, no data. Classes of the ClassFile API itself are
 * left out (the transformer runs on them). One line on stderr at each load:
 * FLOOR in|out named=N classes=C unmodifiable=U skipped=S transformed=T failed=F (of the last
 * "in"; named but not loaded: N - C - U - S; skipped: the ClassFile API's and the agent's own
 * classes).
 */
public final class RetransformFloor {
  /** Retransformations in a batch: fewer VM operations than one per class. */
  private static final int BATCH = 256;

  private static volatile boolean instrument;
  private static int transformed;
  private static int failed;
  private static int unmodifiable;
  private static int skipped;

  private static Instrumentation held;
  private static ClassFileTransformer nops;
  private static List<Class<?>> instrumented = List.of();

  private static int named;

  public static void agentmain(String args, Instrumentation inst) throws Exception {
    if (args.startsWith("in=") && held == null) {
      Set<String> names = new HashSet<>(Files.readAllLines(Path.of(args.substring(3))));
      named = names.size();
      transformed = 0;
      failed = 0;
      unmodifiable = 0;
      skipped = 0;
      instrumented = loaded(inst, names);
      held = inst;
      nops = new ClassFileTransformer() {
        @Override
        public byte[] transform(Module module, ClassLoader loader, String name, Class<?> redefined,
            ProtectionDomain domain, byte[] bytes) {
          if (redefined == null || !instrument) return null;
          try {
            ClassFile cf = ClassFile.of();
            byte[] out = cf.transformClass(cf.parse(bytes),
                ClassTransform.transformingMethodBodies(new CodeTransform() {
                  @Override
                  public void atStart(CodeBuilder b) {
                    b.nop();
                  }

                  @Override
                  public void accept(CodeBuilder b, CodeElement e) {
                    b.with(e);
                  }
                }));
            transformed++;
            return out;
          } catch (Throwable e) {
            failed++;
            return null;
          }
        }
      };
      held.addTransformer(nops, true);
      instrument = true;
      retransform(held, instrumented);
    } else if (args.equals("out") && held != null) {
      instrument = false;
      try {
        retransform(held, instrumented);
      } finally {
        held.removeTransformer(nops);
        held = null;
      }
    } else {
      throw new IllegalArgumentException("expected in=NAMES_FILE (when out) or out (when in): "
          + args);
    }
    System.err.println("FLOOR " + (instrument ? "in" : "out") + " named=" + named + " classes="
        + instrumented.size() + " unmodifiable=" + unmodifiable + " skipped=" + skipped
        + " transformed=" + transformed + " failed=" + failed);
  }

  private static List<Class<?>> loaded(Instrumentation inst, Set<String> names) {
    List<Class<?>> classes = new ArrayList<>();
    for (Class<?> c : inst.getAllLoadedClasses()) {
      String name = c.getName();
      if (!names.contains(name) || c.isArray()) continue;
      if (c.isHidden() || !inst.isModifiableClass(c)) {
        unmodifiable++;
        continue;
      }
      if (name.startsWith("RetransformFloor") || name.startsWith("java.lang.classfile.")
          || name.startsWith("jdk.internal.classfile.")) {
        skipped++;
        continue;
      }
      classes.add(c);
    }
    return classes;
  }

  private static void retransform(Instrumentation inst, List<Class<?>> classes) {
    for (int i = 0; i < classes.size(); i += BATCH) {
      List<Class<?>> batch = classes.subList(i, Math.min(classes.size(), i + BATCH));
      try {
        inst.retransformClasses(batch.toArray(new Class<?>[0]));
      } catch (Throwable e) {
        // One bad class fails its whole batch: retry the batch one class at a time.
        for (Class<?> c : batch) {
          try {
            inst.retransformClasses(c);
          } catch (Throwable e2) {
            failed++;
          }
        }
      }
    }
  }
}
