import { describe, expect, it } from "vitest";
import { jobEnvironment, runnerEnvironment } from "../../../extension/handlers/jobEnv";

const host = {
  PATH: "/usr/bin:/bin",
  HOME: "/home/donor",
  LANG: "en_US.UTF-8",
  LC_ALL: "C.UTF-8",
  LC_NUMERIC: "de_DE.UTF-8",
  TZ: "Europe/Berlin",
  TMPDIR: "/tmp/donor",
  FARMHAND_KEY: "fh_w_secret",
  FARMHAND_OPERATOR_KEY: "fh_o_secret",
  GITHUB_TOKEN: "ghp_secret",
  AWS_SECRET_ACCESS_KEY: "aws_secret",
  VSCODE_IPC_HOOK: "/run/vscode.sock",
  ELECTRON_RUN_AS_NODE: "1",
  NODE_OPTIONS: "--require /evil.js",
  LC_lower: "not a locale name",
  path: "lowercase is another name on POSIX",
  // names that only begin with an allowed one
  HOMEBREW_GITHUB_API_TOKEN: "ghp_homebrew_secret",
  PATH_EXTRA: "/opt/evil/bin",
  TZ_SECRET: "tz_secret",
  TMPDIR_TOKEN: "tmp_secret",
  LANGUAGE_TOKEN: "lang_secret",
  LCX_TOKEN: "lcx_secret",
  LC_ALL_TOKEN: "lc_all_secret",
};

describe("jobEnvironment", () => {
  it("keeps only the allow-list on POSIX, with the recipe's env on top", () => {
    expect(jobEnvironment({ MY_SETTING: "x", TZ: "UTC" }, host, "linux")).toEqual({
      PATH: "/usr/bin:/bin",
      HOME: "/home/donor",
      LANG: "en_US.UTF-8",
      LC_ALL: "C.UTF-8",
      LC_NUMERIC: "de_DE.UTF-8",
      TZ: "UTC",
      TMPDIR: "/tmp/donor",
      MY_SETTING: "x",
    });
  });

  it("allows by exact name: a name that only begins with an allowed one stays out; LC_ names are the one family", () => {
    const env = jobEnvironment({}, host, "linux");
    for (const name of ["HOMEBREW_GITHUB_API_TOKEN", "PATH_EXTRA", "TZ_SECRET", "TMPDIR_TOKEN", "LANGUAGE_TOKEN", "LCX_TOKEN", "LC_ALL_TOKEN"]) expect(env).not.toHaveProperty(name);
    expect(env).toMatchObject({ HOME: "/home/donor", PATH: "/usr/bin:/bin", TZ: "Europe/Berlin", LC_ALL: "C.UTF-8" });
    expect(Object.values(env).join("\n")).not.toMatch(/secret|evil/);
    const windows = jobEnvironment({}, { Path: "C:\\Windows", PATH_EXTRA: "C:\\evil", TempToken: "t", TEMP: "C:\\t", USERPROFILE_KEY: "k", ComSpecial: "c" }, "win32");
    expect(Object.keys(windows).sort()).toEqual(["Path", "TEMP"]);
  });

  it("keeps Windows' equivalents there, whatever their case, and still nothing else", () => {
    const windows = { Path: "C:\\Windows", SystemRoot: "C:\\Windows", SYSTEMDRIVE: "C:", TEMP: "C:\\t", TMP: "C:\\t", USERPROFILE: "C:\\Users\\d", PATHEXT: ".EXE", ComSpec: "cmd.exe", windir: "C:\\Windows", APPDATA: "C:\\Users\\d\\AppData", FARMHAND_KEY: "k", VSCODE_PID: "1" };
    expect(Object.keys(jobEnvironment({}, windows, "win32")).sort()).toEqual(["ComSpec", "PATHEXT", "Path", "SYSTEMDRIVE", "SystemRoot", "TEMP", "TMP", "USERPROFILE", "windir"]);
    // Windows' names mean nothing special elsewhere.
    expect(jobEnvironment({}, { SystemRoot: "x", COMSPEC: "y" }, "linux")).toEqual({});
  });

  it("gives the runner ELECTRON_RUN_AS_NODE (needed to start it under Electron) and nothing else beyond the allow-list", () => {
    const env = runnerEnvironment(host, "linux", false);
    expect(env.ELECTRON_RUN_AS_NODE).toBe("1");
    expect(Object.keys(env).filter((k) => /^(FARMHAND_|VSCODE_|NODE_OPTIONS|GITHUB|AWS)/.test(k))).toEqual([]);
    expect(runnerEnvironment({ PATH: "/bin" }, "linux", false)).toEqual({ PATH: "/bin" });
    // Under Electron it is set whether or not the host had it: the editor's executable is what fork() starts.
    expect(runnerEnvironment({ PATH: "/bin" }, "linux", true)).toEqual({ PATH: "/bin", ELECTRON_RUN_AS_NODE: "1" });
  });
});
