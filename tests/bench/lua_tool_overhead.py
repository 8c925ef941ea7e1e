"""p50 of a trivial Lua tool call over HTTP against a built-in (issue 29), interleaved, paired.

Needs /tmp/luab with .tollgate/tools/echo.lua (a tool returning its `message`) and a git repo;
usage: python3 tests/bench/lua_tool_overhead.py [path/to/tollgate]. Measurement only, not a test.
"""
import subprocess, json, time, http.client, statistics, re, sys
p = subprocess.Popen([(sys.argv[1] if len(sys.argv) > 1 else "target/debug/tollgate"),"mcp","--repo","/tmp/luab","--http","127.0.0.1:0","--tools","all"], stderr=subprocess.PIPE, stdout=subprocess.DEVNULL)
addr=None
for line in p.stderr:
    m=re.search(rb"http://([0-9.]+):(\d+)/mcp", line)
    if m: addr=(m.group(1).decode(), int(m.group(2))); break
def call(path, body):
    c=http.client.HTTPConnection(*addr); t=time.perf_counter()
    c.request("POST", path, body=json.dumps(body), headers={"Content-Type":"application/json"})
    r=c.getresponse(); data=r.read(); dt=time.perf_counter()-t; c.close()
    assert r.status==200, (path, r.status, data[:200]); return dt
lua=[]; builtin=[]
for i in range(20): call("/tools/echo", {"message":"hi"}); call("/tools/scrub_secrets", {"content":"hi"})
for i in range(300):
    lua.append(call("/tools/echo", {"message":"hi"}))
    builtin.append(call("/tools/scrub_secrets", {"content":"hi"}))
p.terminate()
diffs=sorted(a-b for a,b in zip(lua,builtin))
n=len(diffs)
print("lua p50 %.2f ms, builtin p50 %.2f ms, paired diff median %.2f ms [%.2f, %.2f] (ranks for 95%% CI of the median)"%(
  statistics.median(lua)*1e3, statistics.median(builtin)*1e3, statistics.median(diffs)*1e3,
  diffs[int(n/2-1.96*n**0.5/2)]*1e3, diffs[int(n/2+1.96*n**0.5/2)]*1e3))
