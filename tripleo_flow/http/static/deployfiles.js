// The deploy options that are files on the user's computer, sent in the request as
// the CLI sends them (the Deploy form and the lifecycle prepare and converge use them):
// TripleO's baremetal deployment file (its text: baremetal_deployment), and the user's
// environment files (user_environments, each {"name", "files": {path: text}}): those of
// an environment directory first (--environment-directory: its *.yaml files in name
// order, every file of the directory sent with each, so that what one refers to by a
// relative path is there), then the -e files in the order chosen.

// The baremetal deployment file's chooser (id: its input's).
export function baremetalInput(h, id, attrs = {}) {
  return h("input", { id, type: "file", accept: ".yaml,.yml", ...attrs });
}

// The chosen baremetal deployment file's text, or undefined when none is chosen.
export async function baremetalText(input) {
  return input.files.length ? input.files[0].text() : undefined;
}

// The -e files' chooser (several, in the order chosen).
export function environmentFilesInput(h, id, attrs = {}) {
  return h("input", { id, type: "file", multiple: true, accept: ".yaml,.yml", ...attrs });
}

// The environment directory's chooser (a whole directory).
export function environmentDirectoryInput(h, id, attrs = {}) {
  return h("input", { id, type: "file", webkitdirectory: true, ...attrs });
}

// The user_environments of a directory chooser and a -e chooser (either may be null):
// the directory's first, as the CLI orders them; [] when none is chosen.
export async function userEnvironments(directory, files) {
  const found = [];
  if (directory && directory.files.length) {
    const all = {};
    for (const file of directory.files) {
      // webkitRelativePath: "<chosen dir>/<path>"; paths are relative to the directory
      const path = file.webkitRelativePath.split("/").slice(1).join("/") || file.name;
      all[path] = await file.text();
    }
    const tops = Object.keys(all).filter((p) => !p.includes("/") && p.endsWith(".yaml"))
      .sort();
    for (const name of tops) found.push({ name, files: all });
  }
  if (files) {
    for (const file of files.files) {
      found.push({ name: file.name, files: { [file.name]: await file.text() } });
    }
  }
  return found;
}
