import { LineAsker, spawnPowerShell, type LineAnswer, type LineProcess } from "./powerShell";

/**
 * Windows: the running programs' names and the internet connection's cost through ONE long-lived PowerShell (never a
 * process per read). `processes` is answered `farmhand-processes name/name/…` (Get-Process's names, without `.exe`;
 * `/` cannot be part of a file name); `cost` is answered `farmhand-cost <NetworkCostType> <roaming> <over limit>` from
 * the connection profile Windows uses for the internet (WinRT NetworkInformation), or `farmhand-cost none` offline.
 */
export const WINDOWS_WATCH_SCRIPT = `
$ErrorActionPreference = 'Stop'
$null = [Windows.Networking.Connectivity.NetworkInformation, Windows.Networking.Connectivity, ContentType = WindowsRuntime]
[Console]::Out.WriteLine('farmhand-watch-ready')
while ($null -ne ($line = [Console]::In.ReadLine())) {
  try {
    if ($line -eq 'processes') {
      $names = (Get-Process | Select-Object -ExpandProperty ProcessName | Sort-Object -Unique) -join '/'
      [Console]::Out.WriteLine('farmhand-processes ' + $names)
    } elseif ($line -eq 'cost') {
      $connection = [Windows.Networking.Connectivity.NetworkInformation]::GetInternetConnectionProfile()
      if ($null -eq $connection) { [Console]::Out.WriteLine('farmhand-cost none') }
      else {
        $cost = $connection.GetConnectionCost()
        [Console]::Out.WriteLine('farmhand-cost ' + $cost.NetworkCostType + ' ' + [int]$cost.Roaming + ' ' + [int]$cost.OverDataLimit)
      }
    }
  } catch { [Console]::Out.WriteLine('farmhand-watch-error ' + $_.Exception.Message) }
}
`;

/** One `processes` answer → the names; the script's error passes on; anything else is not this answer. */
export function parseProcessesLine(line: string): LineAnswer<string[]> {
  const text = line.trim();
  if (text === "farmhand-processes") return { value: [] };
  if (text.startsWith("farmhand-processes ")) return { value: text.slice("farmhand-processes ".length).split("/").filter(Boolean) };
  return watchError(text);
}

/**
 * One `cost` answer → metered or not. Windows' NetworkCostType: Unrestricted (not metered), Fixed or Variable
 * (metered: a data plan), Unknown (not known). Roaming or over the plan's limit counts as metered whatever the type.
 * No internet connection: not metered (nothing would be downloaded anyway).
 */
export function parseCostLine(line: string): LineAnswer<boolean | undefined> {
  const text = line.trim();
  if (text === "farmhand-cost none") return { value: false };
  const cost = /^farmhand-cost (\w+) ([01]) ([01])$/.exec(text);
  if (cost) {
    if (cost[2] === "1" || cost[3] === "1") return { value: true };
    if (cost[1] === "Fixed" || cost[1] === "Variable") return { value: true };
    return { value: cost[1] === "Unrestricted" ? false : undefined };
  }
  return watchError(text);
}

function watchError(text: string): LineAnswer<never> {
  const error = /^farmhand-watch-error (.*)$/.exec(text);
  return error ? { error: error[1] } : undefined;
}

/** The one PowerShell; it starts on the first question and, once it failed, is not asked again (`why`). */
export class WindowsWatch {
  private readonly asker: LineAsker;

  constructor(start: () => LineProcess = () => spawnPowerShell(WINDOWS_WATCH_SCRIPT)) {
    this.asker = new LineAsker(start);
  }

  /** The running programs' names; undefined when PowerShell cannot answer. */
  processNames(): Promise<string[] | undefined> {
    return this.asker.ask("processes", parseProcessesLine).catch(() => undefined);
  }

  /** Whether the internet connection is metered; undefined when not known. */
  metered(): Promise<boolean | undefined> {
    return this.asker.ask("cost", parseCostLine).catch(() => undefined);
  }

  dispose(): void {
    this.asker.dispose();
  }
}
