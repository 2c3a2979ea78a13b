/**
 * A preload (`node --import <OLD_NODE> …`) under which this Node says it is v20.1.0: how a program's
 * start on an unsupported Node is tried without installing one.
 */
export const OLD_NODE = `data:text/javascript,${encodeURIComponent(
  'for (const [o, k, v] of [[process.versions, "node", "20.1.0"], [process, "version", "v20.1.0"]]) Object.defineProperty(o, k, { value: v });',
)}`;

/** The one line a program prints there, naming the command to run under Node 24 instead. */
export function oldNodeLine(command: string): string {
  return `Node.js v20.1.0 is not supported (package.json engines: ^22.14.0 || ^24.0.0); run: scripts/with-node.sh 24 ${command}\n`;
}
