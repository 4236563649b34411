import json,sys,glob,statistics,re
tag=sys.argv[1]; sides=sys.argv[2:] or ['base','new']
for key in ['tasks_per_s','drain_tasks_per_s']:
    meds={}
    out=[]
    for s in sides:
        files=sorted(glob.glob(f'/tmp/ab/{tag}-{s}-*.json'),key=lambda f:int(re.findall(r'-(\d+)\.json$',f)[0]))
        vals=[]
        for f in files:
            try: vals.append(json.load(open(f))['results'][key])
            except Exception as e: pass
        meds[s]=statistics.median(vals) if vals else float('nan')
        out.append(f"{s}: {vals} med {meds[s]:.1f}")
    print(key, ' | '.join(out), f"ratio {meds[sides[1]]/meds[sides[0]]:.3f}")
