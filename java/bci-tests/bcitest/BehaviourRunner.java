// SPDX-License-Identifier: Apache-2.0
package bcitest;

import java.io.IOException;
import java.lang.reflect.Method;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Runs a program whose classes were instrumented into a directory (tracker: RecordingTracker),
 * then writes the recorded events to a file.
 * Arguments: instrumented-dir main-class events-file.
 */
public final class BehaviourRunner {
  /** Defines the classes found in the directory itself (child first); the rest from the parent. */
  static final class DirLoader extends ClassLoader {
    private final Path dir;

    DirLoader(Path dir, ClassLoader parent) {
      super(parent);
      this.dir = dir;
    }

    @Override
    protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
      synchronized (getClassLoadingLock(name)) {
        Class<?> c = findLoadedClass(name);
        if (c == null) {
          Path file = dir.resolve(name.replace('.', '/') + ".class");
          if (Files.exists(file)) {
            try {
              byte[] bytes = Files.readAllBytes(file);
              c = defineClass(name, bytes, 0, bytes.length);
            } catch (IOException e) {
              throw new ClassNotFoundException(name, e);
            }
          } else {
            c = super.loadClass(name, false);
          }
        }
        if (resolve) resolveClass(c);
        return c;
      }
    }
  }

  public static void main(String[] args) throws Throwable {
    DirLoader loader = new DirLoader(Path.of(args[0]), BehaviourRunner.class.getClassLoader());
    Class<?> main = Class.forName(args[1], true, loader);
    Method m = main.getMethod("main", String[].class);
    try {
      m.invoke(null, (Object) new String[0]);
    } finally {
      Files.writeString(Path.of(args[2]), RecordingTracker.events);
    }
  }
}
